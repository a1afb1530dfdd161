import AuthloadCore
import AuthloadStaging
import AuthloadTesting
import AuthloadWire
import Testing

@testable import AuthloadFlows

/// An open-model arrival that the generator started late: every flow counts its first request and its
/// flow-relative events from the due instant, and nothing else.
@Suite("Flows started after their due instant, in virtual time", .timeLimit(.minutes(1)))
struct DueInstantTests {
    let clock = ManualClock()
    let late = Duration.seconds(2)

    func host(_ configure: (inout StagingConfiguration) -> Void) -> InProcessHost {
        var configuration = StagingConfiguration()
        configure(&configuration)
        let clock = self.clock
        return InProcessHost(clock: clock, service: StagingServer(configuration: configuration, now: { testEpoch + clock.now.offset }))
    }

    @Test("Okta IDX: interact counts from the due instant; the steps after it from when they were sent")
    func okta() async throws {
        let host = host {
            $0.okta.latency = .fixed(.milliseconds(10))
            $0.okta.dispatchLatency = .none
        }
        let result = await FlowProbe.run(
            OktaIDXFlow(options: OktaIDXFlow.Options()), name: "okta", host: host,
            identity: UserIdentity(username: "user0", password: "pw"), late: late)
        #expect(result.outcome == .ok)
        #expect(isNear(result.metric("okta", "interact")?.p50Micros, late + .milliseconds(10)))
        #expect(isNear(result.metric("okta", "introspect")?.p50Micros, .milliseconds(10)))
    }

    @Test("GCCS: the auth request and every status timed from the flow's start count from the due instant")
    func gccs() async throws {
        let host = host {
            $0.gccs.latency = .fixed(.milliseconds(10))
            $0.gccs.nodeDelay = .fixed(.milliseconds(500))
        }
        let result = await FlowProbe.run(GCCSAuthFlow(options: GCCSAuthFlow.Options()), name: "gccs", host: host, late: late)
        #expect(result.outcome == .ok)
        #expect(isNear(result.metric("gccs", "auth")?.p50Micros, late + .milliseconds(10)))
        #expect(isNear(result.metric("gccs", "nodes")?.p50Micros, .milliseconds(10)))
        for (index, status) in GCCSStatus.verification.enumerated() {
            #expect(isNear(result.metric("gccs", status.rawValue)?.p50Micros, late + .milliseconds(510 + 500 * index)), "\(status)")
            #expect(isNear(result.metric("gccs", status.rawValue + " gap")?.p50Micros, .milliseconds(500)), "\(status) gap")
        }
    }

    @Test("Streem: the first login counts from the due instant, a re-login later in the session does not")
    func streemRelogin() async throws {
        let host = host {
            $0.streem.latency = .fixed(.milliseconds(10))
            $0.streem.tokenLifetime = .seconds(30)
            $0.streem.sessionLifetime = .seconds(60)
        }
        var options = StreemSessionFlow.Options()
        options.hold = .fixed(.seconds(120))
        options.refreshLead = .seconds(5)
        options.refreshJitter = .zero
        let result = await FlowProbe.run(
            StreemSessionFlow(options: options), name: "streem", host: host, flowTimeout: .seconds(300),
            identity: UserIdentity(fields: ["username": "u", "password": "p", "invitationCode": "123456789"]),
            late: late)
        #expect(result.outcome == .ok)
        let redeem = try #require(result.metric("streem", "redeem"))
        #expect(redeem.count >= 2, "the login and at least one re-login")
        #expect(isNear(redeem.maxMicros, late + .milliseconds(10)), "only the first redeem carries the wait")
        #expect(isNear(redeem.minMicros, .milliseconds(10)))
    }
}
