import AuthloadCore
import AuthloadTesting
import Testing

@Suite("Closed-model runner on a manual clock", .timeLimit(.minutes(1)))
struct RunnerTests {
    let clock = ManualClock()
    let endpoint = Endpoint(host: "127.0.0.1", port: 1)

    func transport(latency: Duration, status: Int = 200) -> SimulatedTransport<ManualClock> {
        SimulatedTransport(clock: clock) { _, _ in ServiceReply(HTTPResponse(status: status), after: latency) }
    }

    @Test("a 10 s ramp of 100 users adds exactly 10 active users each virtual second")
    func rampIsEven() async throws {
        let plan = RunPlan.closed(users: 100, rampUp: .seconds(10), duration: .seconds(20), think: .milliseconds(900))
        let runner = Runner(
            plan: plan, flows: [PingFlow()], transport: transport(latency: .milliseconds(50)), endpoint: endpoint, clock: clock)
        let run = Task { await runner.run() }
        let start = clock.now
        await clock.waitUntilQuiet(runner.control)
        #expect(runner.control.activeUsers == 0)
        for second in 1...10 {
            await clock.run(until: start.advanced(by: .seconds(second)), quiet: runner.control)
            await clock.waitUntilQuiet(runner.control)
            #expect(runner.control.activeUsers == 10 * second, "after \(second) s")
        }
        await clock.run(until: start.advanced(by: .seconds(20)), quiet: runner.control)
        let outcome = await run.value
        #expect(outcome.elapsed == .seconds(20))
        #expect(runner.control.activeUsers == 0)
    }

    @Test("a one-hour closed run completes with exactly the expected iteration count")
    func oneHourRun() async throws {
        // Each iteration takes exactly 1 s: two 50 ms steps and 900 ms of think time.
        let users = 10
        let plan = RunPlan.closed(users: users, duration: .seconds(3600), think: .milliseconds(900))
        let runner = Runner(
            plan: plan, flows: [PingFlow()], transport: transport(latency: .milliseconds(50)), endpoint: endpoint, clock: clock)
        let run = Task { await runner.run() }
        await clock.run(until: clock.now.advanced(by: .seconds(3600)), quiet: runner.control)
        let outcome = await run.value

        #expect(outcome.iterations == users * 3600)
        let flow = try #require(outcome.measured.metrics.first { $0.id == MetricID(flow: "ping", step: nil) })
        let first = try #require(outcome.measured.metrics.first { $0.id == MetricID(flow: "ping", step: "first") })
        #expect(flow.count == users * 3600)
        #expect(flow.errors == 0)
        #expect(first.count == users * 3600)
        #expect(first.p50Micros == 50_000)
        #expect(flow.p99Micros == 100_000)
        #expect(outcome.measured.timeseries.count == 3600)
        #expect(outcome.measured.timeseries.allSatisfy { row in row.metrics.first { $0.id == flow.id }?.count == users })
    }

    @Test("a request slower than the step timeout is a timeout sample of exactly the timeout")
    func stepTimeout() async throws {
        let plan = RunPlan.closed(users: 1, duration: .seconds(30), think: .seconds(1), stepTimeout: .seconds(10))
        let runner = Runner(plan: plan, flows: [PingFlow()], transport: transport(latency: .seconds(15)), endpoint: endpoint, clock: clock)
        let run = Task { await runner.run() }
        // Iterations start at 0, 11 and 22 s (10 s timeout + 1 s think); the third ends at 32 s, inside the grace.
        await clock.run(until: clock.now.advanced(by: .seconds(32)), quiet: runner.control)
        let outcome = await run.value
        let first = try #require(outcome.measured.metrics.first { $0.id.step == "first" })
        #expect(first.count == 3)
        #expect(first.errors == 3)
        #expect(first.maxMicros == 10_000_000)
        #expect(
            outcome.measured.errors.filter { $0.id == first.id }
                == [ErrorCount(id: first.id, kind: .timeout, detail: "no response within the step timeout", count: 3)])
    }

    @Test("a stop request drains in-flight flows, starts no new ones, and marks the run stopped")
    func gracefulStop() async throws {
        let plan = RunPlan.closed(users: 4, duration: .seconds(600), think: .milliseconds(500))
        let runner = Runner(plan: plan, flows: [PingFlow()], transport: transport(latency: .seconds(1)), endpoint: endpoint, clock: clock)
        let run = Task { await runner.run() }
        let start = clock.now
        await clock.run(until: start.advanced(by: .milliseconds(2_700)), quiet: runner.control)
        await clock.waitUntilQuiet(runner.control)
        // Iteration 1 ran 0–2 s, think until 2.5 s; iteration 2 is 200 ms into its first step and ends at 4.5 s.
        runner.control.requestStop()
        await clock.run(until: start.advanced(by: .milliseconds(4_500)), quiet: runner.control)
        let outcome = await run.value
        #expect(outcome.stoppedEarly)
        #expect(outcome.iterations == 8)
        let flow = try #require(outcome.measured.metrics.first { $0.id.step == nil })
        #expect(flow.count == 8)
        #expect(flow.errors == 0, "the in-flight flows finished inside the grace period")
    }

    @Test("flows still running at the end of the grace period are cancelled and counted as such")
    func graceExpires() async throws {
        let plan = RunPlan.closed(users: 2, duration: .seconds(5), think: .zero, stepTimeout: .seconds(60), grace: .seconds(2))
        let runner = Runner(plan: plan, flows: [PingFlow()], transport: transport(latency: .seconds(30)), endpoint: endpoint, clock: clock)
        let run = Task { await runner.run() }
        await clock.run(until: clock.now.advanced(by: .seconds(7)), quiet: runner.control)
        let outcome = await run.value
        let flow = try #require(outcome.measured.metrics.first { $0.id.step == nil })
        #expect(flow.count == 2)
        #expect(outcome.measured.errors.contains { $0.kind == .cancelled && $0.id.step == nil && $0.count == 2 })
        #expect(outcome.elapsed == .seconds(7))
    }
}
