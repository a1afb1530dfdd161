import AuthloadCore
import Testing

@testable import AuthloadStaging

/// The staging server's access log: routes that do not split by session, in a table that stays small.
@Suite("The staging server's access log", .timeLimit(.minutes(1)))
struct AccessLogTests {
    @Test("100,000 FCSDK logins and logouts against the service leave a table of a handful of routes")
    func sessionsDoNotGrowTheTable() throws {
        let server = StagingServer(configuration: StagingConfiguration())
        for user in 0..<100_000 {
            let body = Array(#"{"username": "user\#(user)@example.com", "password": "demo-password"}"#.utf8)
            let login = server.respond(to: HTTPRequest(method: "POST", target: "/csdk-sample/SDK/login", body: body))
            let response = try login.result.get()
            let session = try #require(JSONValue.parse(response.body)["sessionid"]?.stringValue)
            let logout = server.respond(to: HTTPRequest(method: "DELETE", target: "/csdk-sample/SDK/login/id/\(session)"))
            #expect(try logout.result.get().status == 200)
        }
        let routes = server.accessLog.byRoute
        #expect(
            routes == ["POST /csdk-sample/SDK/login": 100_000, "DELETE /csdk-sample/SDK/login/id/{id}": 100_000], "\(routes.count) routes")
        #expect(server.accessLog.total == 200_000)
    }

    @Test("a server that keeps no access log (a simulation's) answers as one that does, and counts nothing")
    func serverWithoutLog() throws {
        let logging = StagingServer(configuration: StagingConfiguration())
        let silent = StagingServer(configuration: StagingConfiguration(), logsAccess: false)
        let body = Array(#"{"username": "user1@example.com", "password": "demo-password"}"#.utf8)
        for server in [logging, silent] {
            let login = server.respond(to: HTTPRequest(method: "POST", target: "/csdk-sample/SDK/login", body: body))
            #expect(try login.result.get().status == 200)
            #expect(try server.respond(to: HTTPRequest(method: "GET", target: "/health")).result.get().status == 200)
        }
        #expect(logging.accessLog.total == 2)
        #expect(silent.accessLog.total == 0 && silent.accessLog.byRoute.isEmpty)
    }

    @Test("ids of every shape collapse to {id}, numbers to {n}, and the words of an API stay")
    func idShapes() {
        let cases: [(String, String)] = [
            ("/csdk-sample/SDK/login/id/9f3c2a4be01d77c2f00aa1b2c3d4e5f6", "/csdk-sample/SDK/login/id/{id}"),
            ("/csdk-sample/SDK/login/id/abcdefabcdefabcdef", "/csdk-sample/SDK/login/id/{id}"),
            ("/v1/sessions/123e4567-e89b-12d3-a456-426614174000/end", "/v1/sessions/{id}/end"),
            ("/api/tokens/eyJhbGciOiJIUzI1NiJ9_x-Y7", "/api/tokens/{id}"),
            ("/v1/invitations/123456789/redeem", "/v1/invitations/{n}/redeem"),
            ("/idp/idx/challenge/answer", "/idp/idx/challenge/answer"),
            ("/idp/idx/credential/select-authenticator-enroll", "/idp/idx/credential/select-authenticator-enroll"),
            ("/v1/companies/acme/openid-configuration", "/v1/companies/acme/openid-configuration"),
            ("/oauth2/v1/interact", "/oauth2/v1/interact"),
            ("/decade/facade", "/decade/facade"),
            ("/", "/")
        ]
        for (path, route) in cases { #expect(AccessLog.route(of: path) == route, "\(path)") }
    }

    @Test("a UUID without digits is an id only by its shape: dashes where a UUID has them, hex between")
    func uuidShape() {
        let cases: [(String, String)] = [
            ("/v1/sessions/abcdefab-cdef-abcd-efab-cdefabcdefab/end", "/v1/sessions/{id}/end"),
            ("/v1/sessions/ABCDEFAB-CDEF-ABCD-EFAB-CDEFABCDEFAB", "/v1/sessions/{id}"),
            // The same length and letters, a dash out of place or a letter past f: words.
            ("/v1/sessions/abcdefabc-def-abcd-efab-cdefabcdefab/end", "/v1/sessions/abcdefabc-def-abcd-efab-cdefabcdefab/end"),
            ("/v1/sessions/abcdefab-cdef-abcd-efab-cdefabcdefag/end", "/v1/sessions/abcdefab-cdef-abcd-efab-cdefabcdefag/end"),
            // Hex of 16 without a digit is an id; of 15, a word; digits alone a number, whatever their length.
            ("/a/abcdefabcdefabcd", "/a/{id}"),
            ("/a/abcdefabcdefabc", "/a/abcdefabcdefabc"),
            ("/a/0000000000000000000000000", "/a/{n}")
        ]
        for (path, route) in cases { #expect(AccessLog.route(of: path) == route, "\(path)") }
    }

    @Test("requests count under the route they collapse to, hashed as written: ids join one entry, methods do not")
    func recordedRoutes() {
        let log = AccessLog()
        let ids = ["7f3a9c2e51b04d88", "0c1d2e3f4a5b6c7d", "d3b07384-d113-4ec6-a9f0-3c2b6e1c0a55"]
        for id in ids {
            for method in ["GET", "DELETE"] {
                let request = HTTPRequest(method: method, target: "/v2/sessions/\(id)?x=1")
                log.record(request, path: request.path)
            }
        }
        let plain = HTTPRequest(method: "GET", target: "/v2/sessions")
        log.record(plain, path: plain.path)
        #expect(log.byRoute == ["GET /v2/sessions/{id}": 3, "DELETE /v2/sessions/{id}": 3, "GET /v2/sessions": 1])
        #expect(log.total == 7)
    }

    @Test("routes of one length that begin and end alike, and so share a hash, still count apart")
    func routesSharingAHash() {
        let log = AccessLog()
        let targets = ["/aaaa/left/bbbbbbbb", "/aaaa/rite/bbbbbbbb", "/aaaa/left/bbbbbbbb", "/a", "/b"]
        for target in targets {
            let request = HTTPRequest(method: "GET", target: target)
            log.record(request, path: request.path)
        }
        let hashes = ["GET /aaaa/left/bbbbbbbb", "GET /aaaa/rite/bbbbbbbb"].map { route in
            Array(route.utf8).withUnsafeBufferPointer { AccessLog.hash($0) }
        }
        #expect(hashes[0] == hashes[1])
        #expect(log.byRoute == ["GET /aaaa/left/bbbbbbbb": 2, "GET /aaaa/rite/bbbbbbbb": 1, "GET /a": 1, "GET /b": 1])
    }

    @Test("FNV-1a extended a byte at a time is the hash of the bytes, as published")
    func fnvByBytes() {
        // Published FNV-1a 64-bit vectors: "" and "a".
        #expect(FNV1a.hash([UInt8]()) == 0xcbf2_9ce4_8422_2325)
        #expect(FNV1a.hash("a".utf8) == 0xaf63_dc4c_8601_ec8c)
        let bytes = Array("POST /oauth2/v1/token".utf8)
        #expect(bytes.reduce(FNV1a.offsetBasis) { FNV1a.adding($1, to: $0) } == FNV1a.hash(bytes))
    }

    @Test("past its capacity the table counts new routes under other, and every request still counts")
    func bounded() {
        let log = AccessLog(routeCapacity: 3)
        for word in ["alpha", "beta", "gamma", "delta", "epsilon", "alpha"] {
            let request = HTTPRequest(method: "GET", target: "/\(word)")
            log.record(request, path: request.path)
        }
        #expect(log.byRoute == ["GET /alpha": 2, "GET /beta": 1, "GET /gamma": 1, "other": 2])
        #expect(log.total == 6)
        #expect(AccessLog().byRoute.isEmpty && AccessLog.routeCapacity <= 50)
    }
}
