import AuthloadCore
import AuthloadStaging
import AuthloadTesting
import AuthloadWire
import Testing

@testable import AuthloadFlows

/// The Streem flow against a server that holds the client to the contract (docs/protocols.md, Streem):
/// refresh tokens bound to the client and rotated, refused refreshes, a target without a refresh endpoint.
@Suite("Streem session against a strict server, in virtual time", .timeLimit(.minutes(1)))
struct StreemContractTests {
    let clock = ManualClock()
    let technician = UserIdentity(username: "tech@example.com", password: "demo-password")
    let invitee = UserIdentity(fields: ["username": "user0", "password": "demo-password", "invitationCode": "123456789"])

    /// Calls answer in 10 ms; tokens live 5 s; the client is not the one the flow used to assume.
    func staging(_ configure: (inout StreemService.Options) -> Void = { _ in }) -> (InProcessHost, StagingServer) {
        var configuration = StagingConfiguration()
        configuration.streem.latency = .fixed(.milliseconds(10))
        configuration.streem.tokenLifetime = .seconds(5)
        configuration.streem.clientID = "field-app-7"
        configure(&configuration.streem)
        let clock = self.clock
        let server = StagingServer(configuration: configuration, now: { testEpoch + clock.now.offset })
        return (InProcessHost(clock: clock, service: server), server)
    }

    /// A 20 s hold with a call every 2 s.
    func flow(_ configure: (inout StreemSessionFlow.Options) -> Void = { _ in }) -> StreemSessionFlow {
        var options = StreemSessionFlow.Options()
        options.login = .openid
        options.hold = .fixed(.seconds(20))
        options.callInterval = .seconds(2)
        options.refreshLead = .seconds(1)
        options.refreshJitter = .zero
        configure(&options)
        return StreemSessionFlow(options: options)
    }

    @Test(
        "OpenID, either refresh mode: every refresh is one the server granted, every expiry one of its 401s, no error",
        arguments: StreemSessionFlow.Refresh.allCases)
    func boundRefreshTokens(refresh: StreemSessionFlow.Refresh) async throws {
        let (host, server) = staging()
        let result = await FlowProbe.run(
            flow { $0.refresh = refresh }, name: "streem", host: host, flowTimeout: .seconds(60),
            identity: technician)
        #expect(result.outcome == .ok)
        #expect(result.measured.errors.isEmpty, "\(result.measured.errors)")
        let refreshes = try #require(result.metric("streem", "refresh")?.count)
        #expect(refreshes >= 3, "5 s tokens over a 20 s hold")
        #expect(refreshes == server.streem.counts.refreshGrants)
        #expect(server.streem.counts.refusedRefreshes == 0)
        #expect(result.metric("streem", "expired")?.count == server.streem.counts.unauthorized)
        if refresh == .reactive { #expect(server.streem.counts.unauthorized == refreshes) }
    }

    @Test("a refused refresh (invalid_grant) leads to one re-login, and the flow succeeds")
    func refusedRefresh() async throws {
        let (host, server) = staging { $0.refuseFirstRefreshes = 1 }
        let result = await FlowProbe.run(flow(), name: "streem", host: host, flowTimeout: .seconds(60), identity: technician)
        #expect(result.outcome == .ok)
        #expect(result.metric("streem", "relogin")?.count == 1)
        #expect(result.metric("streem", "relogin")?.errors == 0)
        #expect(result.metric("streem", "token")?.count == 2, "the first login and the re-login")
        #expect(result.metric("streem", "refresh")?.errors == 0)
        #expect(result.metric("streem", "refresh")?.count == server.streem.counts.refreshGrants)
        #expect(server.streem.counts.refusedRefreshes == 1)
    }

    @Test("a server that refuses every refresh: one re-login per refusal, no more, and no failed step")
    func everyRefreshRefused() async throws {
        let (host, server) = staging { $0.refuseFirstRefreshes = 1_000 }
        let result = await FlowProbe.run(flow(), name: "streem", host: host, flowTimeout: .seconds(60), identity: technician)
        #expect(result.outcome == .ok)
        let relogins = try #require(result.metric("streem", "relogin")?.count)
        #expect(relogins >= 3, "5 s tokens over a 20 s hold")
        #expect(relogins == server.streem.counts.refusedRefreshes)
        #expect(result.metric("streem", "refresh")?.count == 0)
        #expect(result.measured.errors.isEmpty, "\(result.measured.errors)")
    }

    @Test("an invitation session whose target has no refresh endpoint ends at token expiry, counted, not failed")
    func noRefreshEndpoint() async throws {
        let (host, _) = staging()
        let result = await FlowProbe.run(
            flow {
                $0.login = .invitation
                $0.refreshPath = "/v1/tokens/renew"
            }, name: "streem",
            host: host, flowTimeout: .seconds(60), identity: invitee)
        #expect(result.outcome == .ok)
        #expect(result.metric("streem", "session-ended")?.count == 1)
        #expect(result.measured.errors.isEmpty, "\(result.measured.errors)")
        #expect(result.metric("streem", "refresh")?.count == 0)
        #expect(result.metric("streem", "logout")?.count == 0, "the token has expired: nothing to log out")
        #expect(result.elapsed < .seconds(6), "the session ends when the 5 s token does, not after the 20 s hold")
    }

    /// The embedded server at other paths, as a stack that names them otherwise would serve it; records what was asked.
    final class RenamedPaths: HTTPService {
        let server: StagingServer
        let seen = Locked<[String]>([])

        init(_ server: StagingServer) { self.server = server }

        func respond(to request: HTTPRequest) -> ServiceReply {
            var request = request
            seen.withLock { $0.append("\(request.method) \(request.target)") }
            let parts = request.target.split(separator: "/").map(String.init)
            switch parts.first {
            case "invites": request.target = "/v1/invitations/\(parts[1])/redeem"
            case "tenants": request.target = "/v1/companies/\(parts[1])/openid-configuration"
            case "session-tokens": request.target = "/v1/streem-tokens"
            case "bye": request.target = "/v1/sessions/logout"
            default: break
            }
            return server.respond(to: request)
        }
    }

    @Test("the login, exchange and logout paths are options: a stack that names them otherwise is driven unchanged")
    func pathOptions() async throws {
        for login in StreemSessionFlow.Login.allCases {
            let (_, server) = staging()
            let renamed = RenamedPaths(server)
            let result = await FlowProbe.run(
                flow {
                    $0.login = login
                    $0.hold = .fixed(.seconds(3))
                    $0.redeemPath = "/invites/{code}"
                    $0.configurationPath = "/tenants/{company}"
                    $0.exchangePath = "/session-tokens"
                    $0.logoutPath = "/bye"
                }, name: "streem", host: InProcessHost(clock: clock, service: renamed), flowTimeout: .seconds(60),
                identity: login == .invitation ? invitee : technician)
            #expect(result.outcome == .ok, "\(login): \(result.measured.errors)")
            let seen = renamed.seen.withLock { $0 }
            let expected = login == .invitation ? ["POST /invites/123456789"] : ["GET /tenants/acme", "POST /session-tokens"]
            for request in expected + ["POST /bye"] { #expect(seen.contains(request), "\(login): \(seen)") }
            #expect(!seen.contains { $0.contains("/v1/") && !$0.contains("/v1/me") && !$0.contains("refresh") }, "\(seen)")
        }
        let reader = ProfileReader(path: "flows[0]", value: try JSONValue.parse(Array(#"{"redeemPath": "/invites"}"#.utf8)))
        #expect {
            try StreemSessionFlow.read(reader, basePath: "")
        } throws: { ($0 as? ProfileError)?.description == "flows[0].redeemPath: must hold {code}, where the invitation code goes" }
    }

    @Test("refreshPath is served by the embedded server and read from the profile")
    func refreshPathOption() async throws {
        let reader = ProfileReader(
            path: "flows[0]",
            value: try JSONValue.parse(
                Array(#"{"name": "s", "kind": "streem-session", "refreshPath": "/v2/refresh"}"#.utf8)))
        #expect(try StreemSessionFlow.read(reader, basePath: "").options.refreshPath == "/v2/refresh")
        #expect(StreemSessionFlow.Options().refreshPath == "/v1/streem-tokens/refresh")
        let bad = ProfileReader(path: "flows[0]", value: try JSONValue.parse(Array(#"{"refreshPath": "v2"}"#.utf8)))
        #expect(throws: ProfileError.self) { try StreemSessionFlow.read(bad, basePath: "") }
    }

    @Test(
        "error details say what the response said, never a guess at its meaning",
        arguments: [
            (404, #"{"error": "unknown invitation"}"#, Outcome(.authFailure, "404 unknown invitation")),
            (404, "", Outcome(.authFailure, "404")),
            (404, "<html>Not Found</html>", Outcome(.authFailure, "404")),
            (404, #"{"error": "no staging service at /v1/x"}"#, Outcome(.authFailure, "404")),
            (410, #"{"error": "invitation already redeemed"}"#, Outcome(.authFailure, "410 invitation already redeemed")),
            (410, "{}", Outcome(.authFailure, "410")),
            (400, #"{"error": "invalid_grant"}"#, Outcome(.authFailure, "400 invalid_grant")),
            (503, "", Outcome(.httpError, "503"))
        ])
    func detailsQuoteTheResponse(status: Int, body: String, expected: Outcome) {
        let response = HTTPResponse(status: status, body: Array(body.utf8))
        #expect(StreemSession<ManualClock>.expectToken(response) == expected)
    }

    @Test("a 404 for the OpenID configuration reads as the status and the server's error key")
    func configurationNotFound() {
        #expect(StreemSession<ManualClock>.expectOK(HTTPResponse(status: 404)) == Outcome(.httpError, "404"))
        #expect(
            StreemSession<ManualClock>.expectOK(HTTPResponse(status: 404, body: Array(#"{"error": "unknown company"}"#.utf8)))
                == Outcome(.httpError, "404 unknown company"))
    }

    @Test("a refresh that gets no response is recorded with the time it took to time out")
    func timedOutRefresh() async throws {
        let (host, _) = staging { $0.tokenLatency = .fixed(.seconds(30)) }
        // Log in by invitation (no token endpoint involved), then refresh against a token endpoint that never answers in time.
        let result = await FlowProbe.run(
            flow { $0.login = .invitation }, name: "streem", host: host, stepTimeout: .seconds(3),
            flowTimeout: .seconds(60), identity: invitee)
        #expect(result.outcome.kind == .timeout)
        let refresh = try #require(result.metric("streem", "refresh"))
        #expect(refresh.errors == 1)
        #expect(isNear(refresh.maxMicros, .seconds(3)), "\(refresh.maxMicros) µs")
    }
}
