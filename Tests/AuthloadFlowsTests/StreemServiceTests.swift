import AuthloadCore
import AuthloadStaging
import Testing

/// The Streem staging service answering calls with the tokens it minted.
@Suite("Streem staging service: token checks")
struct StreemServiceTests {
    /// A service whose "now" the test moves, and a Streem token it minted at the start.
    final class Fixture: Sendable {
        let now = Locked(testEpoch)
        let server: StagingServer
        let token: String

        init(lifetime: Duration = .seconds(60), leeway: Duration = .zero) throws {
            var configuration = StagingConfiguration()
            configuration.streem.tokenLifetime = lifetime
            configuration.streem.leeway = leeway
            let now = self.now
            server = StagingServer(configuration: configuration, now: { now.withLock { $0 } })
            let redeemed = try Self.answer(server, HTTPRequest(method: "POST", target: "/v1/invitations/123456789/redeem"))
            token = try #require(try JSONValue.parse(redeemed.body)["streem_token"]?.stringValue)
        }

        static func answer(_ server: StagingServer, _ request: HTTPRequest) throws -> HTTPResponse {
            try server.respond(to: request).result.get()
        }

        /// The status of `GET /v1/me` with `token`, at `seconds` after the start.
        func me(_ token: String, at seconds: Int) throws -> Int {
            now.withLock { $0 = testEpoch + .seconds(seconds) }
            return try Self.answer(server, HTTPRequest(method: "GET", target: "/v1/me", headers: ["Authorization": "Bearer \(token)"]))
                .status
        }
    }

    @Test("a token accepted before is refused once its exp (and the leeway) has passed")
    func acceptedTokenExpires() throws {
        let fixture = try Fixture(lifetime: .seconds(60), leeway: .seconds(5))
        #expect(try fixture.me(fixture.token, at: 0) == 200)
        #expect(try fixture.me(fixture.token, at: 64) == 200, "within the leeway")
        #expect(try fixture.me(fixture.token, at: 65) == 401)
        #expect(try fixture.me(fixture.token, at: 66) == 401)
    }

    @Test("a token whose signature was altered is refused, even while the genuine one is accepted")
    func alteredSignatureIsRefused() throws {
        let fixture = try Fixture()
        #expect(try fixture.me(fixture.token, at: 0) == 200)
        var bytes = Array(fixture.token.utf8)
        bytes[bytes.count - 2] = bytes[bytes.count - 2] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        let altered = String(decoding: bytes, as: UTF8.self)
        #expect(try fixture.me(altered, at: 1) == 401)
        #expect(try fixture.me(fixture.token, at: 2) == 200)
    }

    @Test("a token whose payload was altered under the genuine signature is refused while the genuine one is remembered")
    func alteredPayloadIsRefused() throws {
        let fixture = try Fixture()
        #expect(try fixture.me(fixture.token, at: 0) == 200)
        let parts = fixture.token.split(separator: ".")
        let payload = Array(parts[1].utf8)
        var changed = payload
        changed[3] = changed[3] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        let altered = "\(parts[0]).\(String(decoding: changed, as: UTF8.self)).\(parts[2])"
        #expect(try fixture.me(altered, at: 1) == 401)
        #expect(try fixture.me(fixture.token, at: 2) == 200)
    }

    @Test("a token still verifies after more tokens than the service remembers were minted after it")
    func forgottenTokenVerifiesAgain() throws {
        let fixture = try Fixture()
        for code in 0..<5_000 {
            let redeemed = try Fixture.answer(
                fixture.server, HTTPRequest(method: "POST", target: "/v1/invitations/\(200_000_000 + code)/redeem"))
            #expect(redeemed.status == 200)
        }
        #expect(try fixture.me(fixture.token, at: 1) == 200)
    }

    @Test(
        "routes match a path's segments as a split on / finds them: extra slashes are ignored, a segment more or less is not Streem's",
        arguments: [
            ("/v1/me", 200), ("v1/me", 200), ("//v1//me/", 200), ("/v1/me/extra", 404), ("/v1", 404), ("/v1/mee", 404),
            ("/v2/me", 404), ("/v1/me?x=1", 200)
        ])
    func routesMatchSegments(target: String, status: Int) throws {
        let fixture = try Fixture()
        let answer = try Fixture.answer(
            fixture.server, HTTPRequest(method: "GET", target: target, headers: ["Authorization": "Bearer \(fixture.token)"]))
        #expect(answer.status == status)
    }

    @Test("the segment a route's * matches is the one handed on: the invitation code, the company")
    func wildcardSegment() throws {
        let fixture = try Fixture()
        let redeem = { (code: String) in
            try Fixture.answer(fixture.server, HTTPRequest(method: "POST", target: "/v1/invitations/\(code)/redeem")).status
        }
        #expect(try redeem("123456789") == 200)
        #expect(try redeem("923456789") == 404, "codes starting with 9 are unknown invitations")
        #expect(try redeem("12345") == 400)
        let configuration = { (company: String) in
            try Fixture.answer(fixture.server, HTTPRequest(method: "GET", target: "/v1/companies/\(company)/openid-configuration")).status
        }
        #expect(try configuration("acme") == 200)
        #expect(try configuration("other") == 404)
    }

    @Test(
        "an invitation code is nine ASCII digits: a letter, a tenth digit or digits of another script are refused",
        arguments: [
            ("123456789", 200), ("000000000", 200), ("12345678a", 400), ("1234567890", 400), ("12345678", 400),
            ("\u{661}\u{662}\u{663}\u{664}\u{665}\u{666}\u{667}\u{668}\u{669}", 400), ("12345678\u{663}", 400), ("12345678\u{BD}", 400)
        ])
    func invitationCodes(code: String, status: Int) throws {
        let fixture = try Fixture()
        let answer = try Fixture.answer(fixture.server, HTTPRequest(method: "POST", target: "/v1/invitations/\(code)/redeem"))
        #expect(answer.status == status)
    }
}
