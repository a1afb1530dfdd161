import AuthloadTesting
import Testing

@testable import AuthloadCore

/// A flow that holds its session 0–6 s (far past a 2 s step timeout) before one request: its samples finish
/// long after the time series has closed the interval they started in.
private struct HoldFlow: Flow {
    var stepNames: [String] { ["call"] }

    func run<C: Clock>(_ context: FlowContext<C>, user: isolated VirtualUser) async -> Outcome where C.Duration == Duration {
        let hold = Duration.milliseconds(Int.random(in: 0...6_000, using: &user.random))
        let paused = await context.pause(for: hold)
        guard paused.isOK else { return paused }
        return await context.exchange(step: 0, HTTPRequest(method: "GET", target: "/ping")) { _ in .ok }.outcome
    }
}

@Suite("Samples that finish after their interval closed still reach every window and stage", .timeLimit(.minutes(1)))
struct SlowSampleTests {
    let clock = ManualClock()
    let endpoint = Endpoint(host: "127.0.0.1", port: 1)

    func plan(users: Int, duration: Duration) -> RunPlan {
        var plan = RunPlan.closed(users: users, duration: duration, think: .milliseconds(100), stepTimeout: .seconds(2))
        plan.flows = [FlowPlan(name: "hold", kind: "hold", options: ProfileReader(path: "flows[0]", value: .null))]
        return plan
    }

    var transport: SimulatedTransport<ManualClock> {
        SimulatedTransport(clock: clock) { _, _ in ServiceReply(HTTPResponse(status: 200), after: .milliseconds(10)) }
    }

    @Test("a 5 s window's p99 fails as the whole run's does when the slow flows finish after their rows closed")
    func windowsSeeLateSamples() async throws {
        var plan = plan(users: 20, duration: .seconds(60))
        plan.thresholds = [
            Threshold(metric: "hold", bound: .percentile(99, max: .seconds(5)), path: "thresholds[0]"),
            Threshold(metric: "hold", bound: .percentile(99, max: .seconds(5)), window: .seconds(5), path: "thresholds[1]")
        ]
        let runner = Runner(plan: plan, flows: [HoldFlow()], transport: transport, endpoint: endpoint, clock: clock)
        let outcome = await clock.drive(runner.control) { await runner.run() }
        let verdicts = outcome.measured.thresholds
        try #require(verdicts.count == 2)
        let whole = try #require(verdicts[0].measured)
        let windowed = try #require(verdicts[1].measured)
        #expect(outcome.measured.late.total > 0, "the slow samples did finish after their rows closed")
        #expect(!verdicts[0].passed, "whole-run p99 \(whole) µs")
        #expect(!verdicts[1].passed, "worst 5 s window p99 \(windowed) µs")
        #expect(windowed >= whole, "the worst window holds the run's slowest samples too")
    }

    @Test("each capacity stage counts every flow that started in it, the slow ones included")
    func stagesSeeLateSamples() async throws {
        var plan = plan(users: 20, duration: .seconds(40))
        plan.load.stages = [
            LoadStage(duration: .zero, target: 10), LoadStage(duration: .seconds(20), target: 10),
            LoadStage(duration: .zero, target: 20), LoadStage(duration: .seconds(20), target: 20)
        ]
        let runner = Runner(plan: plan, flows: [HoldFlow()], transport: transport, endpoint: endpoint, clock: clock)
        let outcome = await clock.drive(runner.control) { await runner.run() }
        let capacity = try #require(outcome.measured.capacity)
        let flows = try #require(outcome.measured.metrics.first { $0.id == MetricID(flow: "hold", step: nil) })
        #expect(outcome.measured.late.total > 0)
        #expect(capacity.stages.count == 2)
        #expect(capacity.stages.map(\.flows).reduce(0, +) == flows.count, "\(capacity.stages.map(\.flows)) of \(flows.count)")
    }
}
