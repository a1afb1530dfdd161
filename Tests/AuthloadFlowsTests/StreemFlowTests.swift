import AuthloadCore
import AuthloadStaging
import AuthloadTesting
import AuthloadWire
import Testing

@testable import AuthloadFlows

/// The epoch the staging service's wall clock starts from in these tests.
let testEpoch = Duration.seconds(1_800_000_000)

@Suite("Streem session flow against the staging service, in virtual time", .timeLimit(.minutes(1)))
struct StreemFlowTests {
    let clock = ManualClock()
    let invitee = UserIdentity(fields: ["username": "user0", "password": "demo-password", "invitationCode": "123456789"])

    /// Calls answer in 10 ms; tokens live 30 s.
    func staging(_ configure: (inout StreemService.Options) -> Void = { _ in }) -> InProcessHost {
        var configuration = StagingConfiguration()
        configuration.streem.latency = .fixed(.milliseconds(10))
        configuration.streem.tokenLifetime = .seconds(30)
        configure(&configuration.streem)
        let clock = self.clock
        return InProcessHost(clock: clock, service: StagingServer(configuration: configuration, now: { testEpoch + clock.now.offset }))
    }

    /// One session, with a flow timeout that covers the 2-minute hold.
    func probe(_ flow: StreemSessionFlow, _ host: InProcessHost, identity: UserIdentity? = nil) async -> FlowProbe.Result {
        await FlowProbe.run(flow, name: "streem", host: host, flowTimeout: .seconds(300), identity: identity ?? invitee)
    }

    func flow(_ configure: (inout StreemSessionFlow.Options) -> Void = { _ in }) -> StreemSessionFlow {
        var options = StreemSessionFlow.Options()
        options.hold = .fixed(.seconds(120))
        options.callInterval = .seconds(10)
        options.refreshLead = .seconds(5)
        options.refreshJitter = .zero
        configure(&options)
        return StreemSessionFlow(options: options)
    }

    @Test("proactive: the token is renewed lead-time before it expires, and no call ever sees a 401")
    func proactive() async throws {
        let result = await probe(flow(), staging(), identity: invitee)
        #expect(result.outcome == .ok)
        // Token received at 10 ms lives 30 s: refreshes at 25.01, 50.02, 75.03, 100.04 s; calls at 0, 10, …, 110 s.
        #expect(result.metric("streem", "refresh")?.count == 4)
        #expect(result.metric("streem", "call")?.count == 12)
        #expect(result.metric("streem", "call")?.errors == 0)
        #expect(result.metric("streem", "expired")?.count == 0)
        #expect(result.metric("streem", "logout")?.count == 1)
        #expect(isNear(result.metric("streem", "refresh")?.p50Micros, .milliseconds(10)))
        #expect(result.elapsed == .milliseconds(120_020))
    }

    @Test("reactive: each refresh follows exactly one 401, and the call is made again")
    func reactive() async throws {
        let result = await probe(flow { $0.refresh = .reactive }, staging(), identity: invitee)
        #expect(result.outcome == .ok)
        let refreshes = try #require(result.metric("streem", "refresh")?.count)
        #expect(refreshes == 3, "a 30 s token and a call every 10 s: 401s at 30, 60 and 90 s of the token's life")
        #expect(result.metric("streem", "expired")?.count == refreshes)
        #expect(result.metric("streem", "call")?.errors == 0)
        #expect(result.metric("streem", "call")?.count == 12)
    }

    @Test("reactive: a logout with an expired token renews it and logs out, without a failure")
    func reactiveLogout() async throws {
        // The hold ends as the token expires, with no call in between to notice.
        let result = await probe(
            flow {
                $0.refresh = .reactive
                $0.hold = .fixed(.seconds(35))
                $0.callInterval = .seconds(60)
            }, staging(), identity: invitee)
        #expect(result.outcome == .ok)
        #expect(result.metric("streem", "expired")?.count == 1)
        #expect(result.metric("streem", "logout")?.count == 1)
        #expect(result.metric("streem", "logout")?.errors == 0)
    }

    @Test("jitter draws each refresh between lead and lead + jitter before expiry")
    func jitter() async throws {
        let result = await probe(flow { $0.refreshJitter = .seconds(10) }, staging(), identity: invitee)
        #expect(result.outcome == .ok)
        // Intervals between refreshes fall in [15, 25] s: over 120 s that is 4 to 8 refreshes.
        let count = try #require(result.metric("streem", "refresh")?.count)
        #expect((4...8).contains(count))
        #expect(result.metric("streem", "call")?.errors == 0)
    }

    @Test("near session_exp a refresh cannot help: the user logs in again")
    func sessionEnd() async throws {
        let result = await probe(flow(), staging { $0.sessionLifetime = .seconds(60) }, identity: invitee)
        #expect(result.outcome == .ok)
        #expect((result.metric("streem", "relogin")?.count ?? 0) >= 1)
        #expect(result.metric("streem", "redeem")?.count == 1 + (result.metric("streem", "relogin")?.count ?? 0))
        #expect(result.metric("streem", "call")?.errors == 0)
    }

    @Test("OpenID: configuration, password grant, exchange; refreshes rotate the refresh token")
    func openID() async throws {
        let result = await probe(
            flow { $0.login = .openid }, staging(), identity: UserIdentity(username: "tech@example.com", password: "demo-password"))
        #expect(result.outcome == .ok)
        for step in ["openid-configuration", "token", "exchange"] {
            #expect(result.metric("streem", step)?.count == 1, "\(step)")
        }
        #expect(result.metric("streem", "refresh")?.count == 4)
        #expect(isNear(result.metric("streem", "refresh")?.p50Micros, .milliseconds(20)), "a refresh is two requests")
        #expect(result.metric("streem", "call")?.errors == 0)
    }

    @Test(
        "login failures are auth failures named by what the server said",
        arguments: [
            ("unknown invitation", Outcome(.authFailure, "404 unknown invitation")),
            ("wrong password", Outcome(.authFailure, "400 invalid_grant")),
            ("used invitation", Outcome(.authFailure, "410 invitation already redeemed"))
        ])
    func loginFailures(case name: String, expected: Outcome) async throws {
        let host = staging { $0.singleUseInvitations = name == "used invitation" }
        var identity = invitee
        var configure: (inout StreemSessionFlow.Options) -> Void = { _ in }
        switch name {
        case "unknown invitation": identity.fields["invitationCode"] = "912345678"
        case "wrong password":
            identity = UserIdentity(username: "tech", password: "nope")
            configure = { $0.login = .openid }
        default:
            _ = await probe(flow(), host, identity: identity)
        }
        let result = await probe(flow(configure), host, identity: identity)
        #expect(result.outcome == expected)
        #expect(!result.outcome.detail.contains("nope"), "no secret in an error detail")
    }

    @Test("a hold longer than the flow timeout fails with a message that says what to change")
    func holdBeyondDeadline() async throws {
        let result = await FlowProbe.run(flow(), name: "streem", host: staging(), flowTimeout: .seconds(60), identity: invitee)
        #expect(result.outcome == Outcome(.timeout, "flow deadline passed during the hold (make timeouts.flow longer than hold)"))
    }
}
