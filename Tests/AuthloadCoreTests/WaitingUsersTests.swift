import AuthloadTesting
import Testing

@testable import AuthloadCore

@Suite("Waiting users: the closed model's heap and its scheduler", .timeLimit(.minutes(1)))
struct WaitingUsersTests {
    typealias Entry = WaitingUsers<ManualClock.Instant>.Entry

    func at(_ seconds: Int) -> ManualClock.Instant { ManualClock.Instant(offset: .seconds(seconds)) }

    @Test("users come off due first, ties by number, and only once they are due")
    func dueOrder() {
        let waiting = WaitingUsers<ManualClock.Instant>(control: RunControl())
        for (due, index) in [(5, 3), (2, 9), (5, 1), (9, 0)] {
            #expect(waiting.push(Entry(due: at(due), index: index, user: nil, active: false)))
        }
        var order: [Int] = []
        while let entry = waiting.popDue(now: at(5)) { order.append(entry.index) }
        #expect(order == [9, 1, 3])
        #expect(!waiting.isEmpty)
        #expect(waiting.close().map(\.index) == [0])
    }

    @Test("a push before the scheduler's target wakes it, counted as live until it takes the wake")
    func earlierPushWakes() {
        let control = RunControl()
        let waiting = WaitingUsers<ManualClock.Instant>(control: control)
        _ = waiting.push(Entry(due: at(30), index: 0, user: nil, active: false))
        let (target, early) = waiting.nextWake(limit: at(60))
        #expect(target == at(30))
        // Later than the target: the scheduler sleeps on.
        _ = waiting.push(Entry(due: at(40), index: 1, user: nil, active: true))
        #expect(!early.isSet && control.liveTasks == 0)
        _ = waiting.push(Entry(due: at(10), index: 2, user: nil, active: true))
        #expect(early.isSet && control.liveTasks == 1)
        waiting.woke(early)
        #expect(control.liveTasks == 0)
    }

    @Test("a deadline's timer wakes only the sleep it was set for; a stop wakes whatever sleep there is")
    func timerWakesItsOwnSleep() {
        let control = RunControl()
        let waiting = WaitingUsers<ManualClock.Instant>(control: control)
        _ = waiting.push(Entry(due: at(30), index: 0, user: nil, active: false))
        let (_, first) = waiting.nextWake(limit: at(60))
        waiting.wake(sleepingOn: first)
        #expect(first.isSet && control.liveTasks == 1)
        waiting.woke(first)
        let (_, second) = waiting.nextWake(limit: at(60))
        // The first sleep's timer, had it not been called off in time: the second sleep goes on.
        waiting.wake(sleepingOn: first)
        #expect(!second.isSet && control.liveTasks == 0)
        waiting.wake(sleepingOn: nil)
        #expect(second.isSet && control.liveTasks == 1)
        waiting.woke(second)
        #expect(control.liveTasks == 0)
    }

    @Test("a flag runs what waits for it once it is set, after its waiters, and at once when it is set already")
    func flagActions() {
        let flag = AsyncFlag()
        let log = Locked<[String]>([])
        flag.whenSet { log.withLock { $0.append("first") } }
        flag.whenSet { log.withLock { $0.append("second") } }
        #expect(log.withLock { $0 }.isEmpty)
        flag.set()
        flag.set()
        flag.whenSet { log.withLock { $0.append("late") } }
        #expect(log.withLock { $0 } == ["first", "second", "late"])
    }

    @Test("the last user to go wakes the scheduler; after close a push is refused")
    func lastUserAndClose() {
        let control = RunControl()
        let waiting = WaitingUsers<ManualClock.Instant>(control: control)
        _ = waiting.push(Entry(due: at(1), index: 0, user: nil, active: false))
        #expect(waiting.popDue(now: at(1))?.index == 0)
        let (_, early) = waiting.nextWake(limit: at(60))
        #expect(!waiting.isEmpty)
        waiting.taskEnded()
        #expect(waiting.isEmpty && early.isSet)
        waiting.woke(early)
        #expect(control.liveTasks == 0)
        _ = waiting.close()
        #expect(!waiting.push(Entry(due: at(2), index: 0, user: nil, active: true)))
    }

    @Test("a thinking user is no task: 1,000 users between flows leave the run three live tasks")
    func thinkingUsersAreNoTasks() async throws {
        let clock = ManualClock()
        let plan = RunPlan.closed(users: 1_000, rampUp: .seconds(10), duration: .seconds(60), think: .seconds(30))
        let transport = SimulatedTransport(clock: clock) { _, _ in ServiceReply(HTTPResponse(status: 200), after: .milliseconds(50)) }
        let runner = Runner(
            plan: plan, flows: [PingFlow()], transport: transport, endpoint: Endpoint(host: "127.0.0.1", port: 1), clock: clock)
        let run = Task { await runner.run() }
        // Past the ramp and every first flow (the last starts at 10 s and takes 100 ms), before anyone's think ends.
        await clock.run(until: clock.now.advanced(by: .seconds(12)), quiet: runner.control)
        await clock.waitUntilQuiet(runner.control)
        #expect(runner.control.activeUsers == 1_000)
        #expect(runner.control.inFlight == 0)
        // The scheduler, the timekeeper and the collector: no task per user.
        #expect(runner.control.liveTasks == 3)
        await clock.run(until: clock.now.advanced(by: .seconds(48)), quiet: runner.control)
        let outcome = await run.value
        // Each user: a flow at its start, and one after 30 s of thinking (the last starts at 40.1 s).
        #expect(outcome.iterations == 2_000)
        #expect(runner.control.activeUsers == 0)
    }

    @Test("user tasks: cancelAll reaches the tasks running and those started after it; the wait ends when none runs")
    func userTasksCancelAndWait() async {
        let tasks = UserTasks()
        let gate = AsyncFlag()
        let cancelled = Locked(0)
        for key in 0..<3 {
            tasks.start(key, executorPreference: nil) {
                await gate.wait()
                if Task.isCancelled { cancelled.withLock { $0 += 1 } }
            }
        }
        tasks.cancelAll()
        tasks.start(3, executorPreference: nil) {
            if Task.isCancelled { cancelled.withLock { $0 += 1 } }
        }
        await tasks.waitUntilNoneRun()
        #expect(cancelled.withLock { $0 } == 4)
        // Nothing runs: the wait returns at once.
        await tasks.waitUntilNoneRun()
    }
}
