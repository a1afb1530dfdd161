import AuthloadCore
import AuthloadTesting
import Testing

@Suite("Stages on a manual clock", .timeLimit(.minutes(1)))
struct StagedRunTests {
    let clock = ManualClock()
    let endpoint = Endpoint(host: "127.0.0.1", port: 1)

    func activeUsers(_ outcome: RunOutcome, at second: Int) -> Int? {
        outcome.measured.timeseries.first { $0.index == second - 1 }?.activeUsers
    }

    @Test("closed-model stages ramp users up, hold, ramp them down, and bring them back on a jump")
    func closedStages() async throws {
        let transport = SimulatedTransport(clock: clock) { _, _ in ServiceReply(HTTPResponse(status: 200), after: .milliseconds(5)) }
        var plan = RunPlan.closed(users: 10, duration: .seconds(1), think: .milliseconds(990))
        plan.load.stages = [
            LoadStage(duration: .milliseconds(500), target: 0), LoadStage(duration: .seconds(10), target: 10),
            LoadStage(duration: .seconds(10), target: 10), LoadStage(duration: .seconds(10), target: 0),
            LoadStage(duration: .zero, target: 3), LoadStage(duration: .seconds(5), target: 3)
        ]
        plan.load.duration = .milliseconds(35_500)
        let runner = Runner(plan: plan, flows: [PingFlow()], transport: transport, endpoint: endpoint, clock: clock)
        let outcome = await clock.drive(runner.control) { await runner.run() }
        // User n starts at 0.5 + (n + 1) s, so 4 are active at 5 s; all 10 hold from 10.5 s to 20.5 s.
        #expect(activeUsers(outcome, at: 5) == 4)
        #expect(activeUsers(outcome, at: 15) == 10)
        #expect(activeUsers(outcome, at: 20) == 10)
        // The level falls from 10 to 0 by 30.5 s and jumps to 3: users 0–2 come back, the rest stay away.
        #expect(activeUsers(outcome, at: 33) == 3)
        #expect(outcome.measured.timeseries.map(\.activeUsers).max() == 10)
        #expect(outcome.generator.keptSchedule)
    }

    @Test("open-model steps start exactly the arrivals each step's rate asks for")
    func openSteps() async throws {
        let transport = SimulatedTransport(clock: clock) { _, _ in ServiceReply(HTTPResponse(status: 200), after: .milliseconds(10)) }
        let stages = [
            LoadStage(duration: .zero, target: 20), LoadStage(duration: .seconds(5), target: 20),
            LoadStage(duration: .zero, target: 50), LoadStage(duration: .seconds(5), target: 50)
        ]
        let runner = Runner(
            plan: .open(stages: stages), flows: [SingleRequestFlow()], transport: transport, endpoint: endpoint, clock: clock)
        let outcome = await clock.drive(runner.control) { await runner.run() }
        let counts = outcome.measured.timeseries.map { row in row.metrics.first { $0.id.step == nil }?.count ?? 0 }
        #expect(counts == [20, 20, 20, 20, 20, 50, 50, 50, 50, 50])
        #expect(outcome.iterations == 350)
    }
}

@Suite("Schedule lag of the closed model", .timeLimit(.minutes(1)))
struct ClosedLagTests {
    let clock = ManualClock()

    @Test("a flow still running at the planned end is not counted as a late wake-up")
    func overrunIsNotLag() async throws {
        // 2 s flows with 1 s think from 0 s: the flow started at 3 s ends at 5 s, 1 s after the 4 s end.
        let transport = SimulatedTransport(clock: clock) { _, _ in ServiceReply(HTTPResponse(status: 200), after: .seconds(1)) }
        let runner = Runner(
            plan: .closed(users: 3, duration: .seconds(4), think: .seconds(1)), flows: [PingFlow()],
            transport: transport, endpoint: Endpoint(host: "127.0.0.1", port: 1), clock: clock)
        let outcome = await clock.drive(runner.control) { await runner.run() }
        #expect(outcome.elapsed == .seconds(5))
        #expect(outcome.generator.lagSamples == 6, "3 ramp starts and the 3 wake-ups at 3 s")
        #expect(outcome.generator.lagMaxMicros <= 1)
        #expect(outcome.generator.keptSchedule)
    }
}
