import AuthloadCore
import AuthloadSimulation
import Testing

/// The discrete-event driver under `run --simulate`: one thread, FIFO, and a clock that moves only when nothing can run.
@Suite("Simulation executor and clock", .timeLimit(.minutes(1)))
struct SimulationExecutorTests {
    @Test("The clock jumps only once every ready job has run, and wakes sleepers due together in the order they slept")
    func jumpsWhenQuiet() async {
        let clock = SimulationClock()
        let executor = SimulationExecutor()
        let log = Locked<[String]>([])
        let end = await executor.run(clock: clock) {
            await withTaskGroup(of: Void.self) { group in
                for sleeper in 0..<3 {
                    group.addTask {
                        try? await clock.sleep(until: .init(offset: .seconds(5)))
                        log.withLock { $0.append("sleeper \(sleeper) at \(clock.now)") }
                    }
                }
                group.addTask {
                    // Ready work the whole time: the clock must wait for it, however many turns it takes.
                    for _ in 0..<1_000 { await Task.yield() }
                    log.withLock { $0.append("busy at \(clock.now)") }
                }
            }
            return clock.now
        }
        #expect(log.withLock { $0 } == ["busy at t+0s", "sleeper 0 at t+5s", "sleeper 1 at t+5s", "sleeper 2 at t+5s"])
        #expect(end == .init(offset: .seconds(5)))
    }

    @Test("A cancelled timer never runs, a cancelled sleeper throws, and the clock skips both")
    func cancellation() async {
        let clock = SimulationClock()
        let executor = SimulationExecutor()
        let fired = Locked<[String]>([])
        let outcome = await executor.run(clock: clock) {
            let early = clock.schedule(at: .init(offset: .seconds(1))) { fired.withLock { $0.append("cancelled timer") } }
            clock.schedule(at: .init(offset: .seconds(2))) { fired.withLock { $0.append("timer at \(clock.now)") } }
            clock.cancel(early)
            let sleeper = Task(executorPreference: executor) { () -> Bool in
                do {
                    try await clock.sleep(until: .init(offset: .seconds(3600)))
                    return false
                } catch {
                    return error is CancellationError
                }
            }
            try? await clock.sleep(until: .init(offset: .seconds(3)))
            sleeper.cancel()
            return (await sleeper.value, clock.now, clock.pending)
        }
        #expect(fired.withLock { $0 } == ["timer at t+2s"])
        #expect(outcome.0, "the cancelled sleeper threw CancellationError")
        #expect(outcome.1 == SimulationClock.Instant(offset: .seconds(3)), "the clock stopped at the last deadline anyone waited for")
        #expect(outcome.2 == 0)
    }
}
