import AuthloadTesting
import Testing

@testable import AuthloadCore

@Suite("Open-model visits that hand a wait to the engine", .timeLimit(.minutes(1)))
struct HeldVisitTests {
    let endpoint = Endpoint(host: "127.0.0.1", port: 1)

    /// A run of `plan` against a server answering in 50 ms, driven on a manual clock to its end, and the arrivals each
    /// new worker started with.
    func run(_ plan: RunPlan, flow: HeldPingFlow) async -> (outcome: RunOutcome, workers: [Int]) {
        let clock = ManualClock()
        let transport = SimulatedTransport(clock: clock) { _, _ in ServiceReply(HTTPResponse(status: 200), after: .milliseconds(50)) }
        let workers = Locked<[Int]>([])
        let hooks = RunHooks(workerStarted: { number in workers.withLock { $0.append(number) } })
        let runner = Runner(plan: plan, flows: [flow], transport: transport, endpoint: endpoint, clock: clock, hooks: hooks)
        let outcome = await clock.drive(runner.control) { await runner.run() }
        return (outcome, workers.withLock { $0 })
    }

    @Test("a held visit frees its worker for the next arrival, with the same flows, steps and times as a visit that waits")
    func heldLikeWaited() async throws {
        // 5 arrivals/s for 10 s; each flow is 50 ms, a 2 s wait, 50 ms: about ten visits at once.
        let plan = RunPlan.open(rate: 5, duration: .seconds(10))
        let (waited, waitingWorkers) = await run(plan, flow: HeldPingFlow(wait: .seconds(2), holds: false))
        let (held, heldWorkers) = await run(plan, flow: HeldPingFlow(wait: .seconds(2), holds: true))
        #expect(held.iterations == 50 && waited.iterations == 50)
        #expect(held.generator.started == 50 && held.generator.dropped == 0)
        #expect(held.elapsed == waited.elapsed)
        for step in [nil, "first", "second"] {
            let a = try #require(waited.measured.metrics.first { $0.id.step == step })
            let b = try #require(held.measured.metrics.first { $0.id.step == step })
            #expect(b.count == a.count && b.count == 50 && b.errors == 0, "\(step ?? "flow")")
            #expect(b.p50Micros == a.p50Micros && b.maxMicros == a.maxMicros, "\(step ?? "flow")")
        }
        // A waiting visit keeps its worker for 2.1 s, so eleven are busy at once; a held one only for its first request.
        #expect(waitingWorkers.count == 11)
        #expect(heldWorkers == [0])
        // A held visit's user stays active until its flow ends, as a waiting one does; an arrival due on an interval's
        // tick may count on either side of it, in either run.
        let active = zip(held.measured.timeseries, waited.measured.timeseries).map { ($0.activeUsers, $1.activeUsers) }
        #expect(active.count == 12 && active.allSatisfy { abs($0 - $1) <= 1 }, "\(active)")
    }

    @Test("visits held at the end of the grace period are cancelled and counted as such, and the run ends on time")
    func graceCancelsHeldVisits() async throws {
        var plan = RunPlan.open(rate: 2, duration: .seconds(3), stepTimeout: .seconds(60))
        plan.load.gracefulStop = .seconds(2)
        let (outcome, workers) = await run(plan, flow: HeldPingFlow(wait: .seconds(60), holds: true))
        let flow = try #require(outcome.measured.metrics.first { $0.id.step == nil })
        #expect(flow.count == 6 && workers == [0])
        #expect(outcome.measured.errors.contains { $0.kind == .cancelled && $0.id.step == nil && $0.count == 6 })
        #expect(outcome.elapsed == .seconds(5))
    }
}
