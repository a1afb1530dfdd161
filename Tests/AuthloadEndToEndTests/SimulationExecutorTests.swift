import AuthloadSimulation
import Foundation
import Testing

@testable import AuthloadCore

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

    @Test("Jobs the driver's own thread enqueues run in the order they were enqueued, without its inbox")
    func driverQueueIsFIFO() async {
        let clock = SimulationClock()
        let executor = SimulationExecutor()
        let order = Locked<[Int]>([])
        let jobs = await executor.run(clock: clock) {
            // Every child is enqueued by the driver's thread (the group runs there): they start in the order added.
            await withTaskGroup(of: Void.self) { group in
                for child in 0..<200 { group.addTask { order.withLock { $0.append(child) } } }
            }
            // The count is published whenever the queue runs dry, which it does before the clock moves.
            try? await clock.sleep(until: .init(offset: .seconds(1)))
            return executor.jobsRun
        }
        #expect(order.withLock { $0 } == Array(0..<200))
        #expect(jobs >= 200, "every child ran as a job of this executor")
    }

    @Test("A job from another thread wakes the idle driver, which waits for it rather than ending")
    func foreignJobWakesTheDriver() async {
        let clock = SimulationClock()
        let executor = SimulationExecutor()
        let gate = AsyncFlag()
        let woke = await executor.run(clock: clock) {
            // Nothing is ready and no deadline waits: the driver sleeps on its inbox until the other thread resumes
            // the waiter (its continuation's job comes from that thread), as a signal's stop request does.
            Thread.detachNewThread { gate.set() }
            await gate.wait()
            return clock.now
        }
        #expect(woke == SimulationClock.Instant(offset: .zero), "the clock did not move for a wake from outside")
    }

    @Test("A timer cancelled after it ran, or twice, changes nothing, and pending counts only live waits")
    func timerHandles() async {
        let clock = SimulationClock()
        let executor = SimulationExecutor()
        let fired = Locked(0)
        let counts = await executor.run(clock: clock) {
            let first = clock.schedule(at: .init(offset: .seconds(1))) { fired.withLock { $0 += 1 } }
            let second = clock.schedule(at: .init(offset: .seconds(2))) { fired.withLock { $0 += 1 } }
            let third = clock.schedule(at: .init(offset: .seconds(3))) { fired.withLock { $0 += 1 } }
            let before = clock.pending
            clock.cancel(second)
            clock.cancel(second)
            let afterCancel = clock.pending
            try? await clock.sleep(until: .init(offset: .seconds(1)))
            clock.cancel(first)
            let afterFirst = clock.pending
            try? await clock.sleep(until: .init(offset: .seconds(5)))
            clock.cancel(third)
            return [before, afterCancel, afterFirst, clock.pending]
        }
        #expect(fired.withLock { $0 } == 2, "the first and third ran, the second did not")
        #expect(counts == [3, 2, 1, 0])
    }

    @Test(
        "A user's task runs isolated to the executor from its first job and prefers none; nonisolated code of a task that prefers it runs without hops"
    )
    func jobsRunAsWhatTheyWereEnqueuedAs() async {
        let clock = SimulationClock()
        let executor = SimulationExecutor()
        let user = VirtualUser(index: 0, identity: UserIdentity(username: "u", password: "p"), seed: 1, executor: executor)
        let preferred = Locked<Bool?>(nil)
        let (sleeps, turns, diverted) = await executor.run(clock: clock) {
            // Nonisolated: each sleep is one job, its wake. Run isolated to the executor, every call into a nonisolated
            // async function hopped (a job), and the hop landed isolated again.
            let start = executor.jobsRun
            for second in 1...100 { await Self.nap(clock, until: second) }
            let sleeps = executor.jobsRun - start
            // A user's task as a simulated run starts it: isolated to the executor, with no executor preference, so
            // the clock's resume reaches Swift's global executor, which hands it back to this thread. On the user's
            // actor: a wake per sleep, resumed on the actor (resumed off it, the task hopped back on: a second job).
            let tasks = UserTasks(isolatedTo: executor)
            let before = (executor.jobsRun, executor.jobsFromGlobalExecutor)
            tasks.start(0, executorPreference: nil) {
                preferred.withLock { $0 = withUnsafeCurrentTask { $0?.unownedTaskExecutor != nil } }
                await Self.sleepOn(user, clock, from: 101, count: 100)
            }
            await tasks.waitUntilNoneRun()
            return (sleeps, executor.jobsRun - before.0, executor.jobsFromGlobalExecutor - before.1)
        }
        #expect(sleeps <= 101, "one job a sleep, not \(Double(sleeps) / 100)")
        #expect(preferred.withLock { $0 } == false, "a user's task prefers no executor")
        #expect(turns <= 103, "one job a sleep on the actor, not \(Double(turns) / 100)")
        #expect(diverted >= 100, "each wake went by Swift's global executor and stayed on this thread")
        #expect(executor.jobsFromOtherThreads == 1, "only run's first job came from another thread")
    }

    private static func nap(_ clock: SimulationClock, until second: Int) async {
        try? await clock.sleep(until: .init(offset: .seconds(second)))
    }

    private static func sleepOn(_ user: isolated VirtualUser, _ clock: SimulationClock, from first: Int, count: Int) async {
        for second in first..<(first + count) {
            try? await clock.wait(until: .init(offset: .seconds(second)))
            user.assertIsolated("the actor's jobs run isolated to it")
        }
    }
}
