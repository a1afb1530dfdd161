import AuthloadCore
import AuthloadStaging
import AuthloadTesting
import Testing

@testable import AuthloadFlows

/// Many Streem users at once through the runner and an in-process transport, in virtual time.
@Suite("Streem refresh under load, in virtual time", .serialized, .timeLimit(.minutes(2)))
struct StreemLoadTests {
    struct Run {
        var outcome: RunOutcome
        var flow: StreemSessionFlow

        func count(_ step: String) -> Int { outcome.measured.metrics.first { $0.id == MetricID(flow: "streem", step: step) }?.count ?? 0 }
        func errors(_ step: String) -> Int { outcome.measured.metrics.first { $0.id == MetricID(flow: "streem", step: step) }?.errors ?? 0 }
        func p99(_ step: String) -> Int { outcome.measured.metrics.first { $0.id == MetricID(flow: "streem", step: step) }?.p99Micros ?? 0 }
    }

    /// `users` users log in at once and hold their sessions for `hold`; each then thinks past the end.
    func run(
        users: Int, hold: Duration, callInterval: Duration, tokenLatency: Duration,
        configure: (inout StreemSessionFlow.Options) -> Void
    ) async -> Run {
        let clock = ManualClock()
        var staging = StagingConfiguration()
        staging.streem.tokenLifetime = .seconds(30)
        staging.streem.latency = .fixed(.milliseconds(10))
        staging.streem.tokenLatency = .fixed(tokenLatency)
        let server = StagingServer(configuration: staging, now: { testEpoch + clock.now.offset })
        var options = StreemSessionFlow.Options()
        options.hold = .fixed(hold)
        options.callInterval = callInterval
        options.refreshLead = .seconds(5)
        configure(&options)
        let flow = StreemSessionFlow(options: options)
        let duration = hold + .seconds(10)
        let plan = RunPlan(
            name: "streem", target: .url(TargetURL(endpoint: Endpoint(host: "staging", port: 80))),
            load: LoadPlan(users: users, duration: duration, thinkTime: .fixed(.seconds(3600))),
            flows: [FlowPlan(name: "streem", kind: "streem-session", options: ProfileReader(path: "flows[0]", value: .null))],
            users: UserFeeder(templates: ["invitationCode": "1{n:8}"]),
            timeouts: Timeouts(step: .seconds(10), flow: hold + .seconds(60)))
        let runner = Runner(
            plan: plan, flows: [flow], transport: SimulatedTransport(clock: clock, service: server),
            endpoint: Endpoint(host: "staging", port: 80), clock: clock)
        let task = Task { await runner.run() }
        // Quiet, every user sleeps once (in a pause or a request), beside the runner's timekeeper and collector.
        await clock.run(until: clock.now.advanced(by: duration), quiet: runner.control)
        return Run(outcome: await task.value, flow: flow)
    }

    @Test("1,000 users, 30 s tokens, a 10-minute hold, proactive refresh: the expected count, and no 401 at all")
    func proactive() async throws {
        let run = await run(users: 1000, hold: .seconds(600), callInterval: .seconds(10), tokenLatency: .milliseconds(50)) {
            $0.refreshJitter = .seconds(10)
        }
        // Each token is renewed 15–25 s after it arrived (30 s − 5 s lead − up to 10 s jitter), plus the 50 ms refresh.
        let refreshes = run.count("refresh")
        #expect((1000 * 600 / 25...1000 * 600 / 15).contains(refreshes), "the jitter bound")
        let expected = 1000.0 * 600 / 20.05
        #expect(abs(Double(refreshes) - expected) < expected * 0.05, "\(refreshes) refreshes, about \(Int(expected)) expected")
        #expect(run.count("expired") == 0)
        #expect(run.errors("call") == 0)
        #expect(run.count("call") == 1000 * 60)
        #expect(run.errors("refresh") == 0)
        #expect(run.count("logout") == 1000)
    }

    @Test("1,000 users, reactive refresh: each refresh follows exactly one 401, which never fails a call")
    func reactive() async throws {
        let run = await run(users: 1000, hold: .seconds(600), callInterval: .seconds(10), tokenLatency: .milliseconds(50)) {
            $0.refresh = .reactive
        }
        #expect(run.count("refresh") > 1000 * 10)
        #expect(run.count("expired") == run.count("refresh"))
        #expect(run.errors("call") == 0)
        #expect(run.errors("refresh") == 0)
    }

    @Test("5,000 tokens expiring at once: jitter cuts the peak of concurrent refreshes by at least jitter ÷ refresh time")
    func refreshStorm() async throws {
        let latency = Duration.milliseconds(200)
        let jitter = Duration.seconds(10)
        let storm = await run(users: 5000, hold: .seconds(30), callInterval: .seconds(60), tokenLatency: latency) {
            $0.refreshJitter = .zero
        }
        let spread = await run(users: 5000, hold: .seconds(30), callInterval: .seconds(60), tokenLatency: latency) {
            $0.refreshJitter = jitter
        }
        #expect(storm.count("refresh") == 5000 && spread.count("refresh") == 5000)
        #expect(storm.flow.refreshes.peak == 5000, "every user refreshes in the same instant")
        #expect(storm.outcome.peaks == [PeakReading(flow: "streem", name: "concurrent refreshes", peak: 5000)], "the run reports the peak")
        // Spread uniformly over the jitter, about 5,000 × 0.2 s ÷ 10 s = 100 refresh at once; allow twice the implied peak.
        let implied = jitter / latency
        #expect(
            Double(storm.flow.refreshes.peak) / Double(spread.flow.refreshes.peak) >= implied / 2,
            "peak \(storm.flow.refreshes.peak) without jitter, \(spread.flow.refreshes.peak) with it")
        #expect(isNear(storm.p99("refresh"), latency) && isNear(spread.p99("refresh"), latency))
    }

    /// 10 users each running about 10 one-second invitation sessions against a server that lets a code be redeemed once.
    func singleUseRun(invitationCode template: String) async -> RunOutcome {
        let clock = ManualClock()
        var staging = StagingConfiguration()
        staging.streem.singleUseInvitations = true
        staging.streem.latency = .fixed(.milliseconds(10))
        let server = StagingServer(configuration: staging, now: { testEpoch + clock.now.offset })
        var options = StreemSessionFlow.Options()
        options.hold = .fixed(.seconds(1))
        options.callInterval = .seconds(1)
        let plan = RunPlan(
            name: "streem", target: .url(TargetURL(endpoint: Endpoint(host: "staging", port: 80))),
            load: LoadPlan(users: 10, duration: .seconds(20), thinkTime: .fixed(.seconds(1))),
            flows: [FlowPlan(name: "streem", kind: "streem-session", options: ProfileReader(path: "flows[0]", value: .null))],
            users: UserFeeder(templates: ["invitationCode": template]),
            timeouts: Timeouts(step: .seconds(10), flow: .seconds(30)))
        let runner = Runner(
            plan: plan, flows: [StreemSessionFlow(options: options)], transport: SimulatedTransport(clock: clock, service: server),
            endpoint: Endpoint(host: "staging", port: 80), clock: clock)
        let task = Task { await runner.run() }
        await clock.run(until: clock.now.advanced(by: .seconds(20)), quiet: runner.control)
        return await task.value
    }

    @Test(
        "single-use invitations: with {iteration} in the template every iteration redeems a code of its own; without it, the second gets 410"
    )
    func singleUseInvitations() async throws {
        let redeem = MetricID(flow: "streem", step: "redeem")
        let fresh = await singleUseRun(invitationCode: "1{n:5}{iteration:3}")
        let redeemed = try #require(fresh.measured.metrics.first { $0.id == redeem })
        #expect(redeemed.count >= 50, "several iterations per user")
        #expect(redeemed.errors == 0)

        let reused = await singleUseRun(invitationCode: "1{n:8}")
        let refused = try #require(reused.measured.metrics.first { $0.id == redeem })
        #expect(refused.count >= 50)
        #expect(refused.errors == refused.count - 10, "only each user's first redemption succeeds")
        #expect(reused.measured.errors.contains { $0.id == redeem && $0.detail == "410 invitation already redeemed" })
    }
}
