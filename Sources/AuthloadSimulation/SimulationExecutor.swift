import AuthloadCore
import Foundation

/// The one thread a simulated run executes on: a FIFO queue of jobs, run in order, and the virtual clock moved to
/// its next deadline whenever the queue is empty.
///
/// A run on Swift's cooperative pool cannot tell "every user waits" from "a user's job is on its way to another
/// thread", and jobs that run side by side reach the staging services' seeded draws in whatever order the threads
/// happen to take: the same seed would give different runs. Here the run's tasks (by task-executor preference, see
/// SE-0417), its users' actors (the transport offers this executor) and the services' timers all run on this
/// thread, one job at a time in the order they became ready, so an empty queue means the run is waiting and the
/// order of events is a function of the seed alone.
///
/// Jobs may be enqueued from any thread (a signal's stop request resumes a waiter from the signal's thread); only
/// the driver's thread runs them.
public final class SimulationExecutor: SerialExecutor, TaskExecutor, @unchecked Sendable {
    private let condition = NSCondition()
    // Guarded by `condition`.
    private var jobs: [UnownedJob] = []
    private var head = 0
    private var stopped = false
    /// Jobs run so far, for the progress line and tests.
    private let ran = Locked(0)

    public init() {}

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    public func asUnownedSerialExecutor() -> UnownedSerialExecutor { UnownedSerialExecutor(ordinary: self) }

    /// Jobs run so far.
    public var jobsRun: Int { ran.withLock { $0 } }

    private func nextJob() -> UnownedJob? {
        condition.lock()
        defer { condition.unlock() }
        guard head < jobs.count else { return nil }
        let job = jobs[head]
        head += 1
        if head == jobs.count {
            jobs.removeAll(keepingCapacity: true)
            head = 0
        } else if head >= 4096, head * 2 >= jobs.count {
            jobs.removeFirst(head)
            head = 0
        }
        return job
    }

    /// Runs jobs on the calling thread, moving `clock` whenever none is ready, until ``stop()``.
    ///
    /// When neither a job nor a deadline is left, it waits for a job from another thread (or the stop).
    public func drive(_ clock: SimulationClock) {
        let serial = asUnownedSerialExecutor()
        let task = asUnownedTaskExecutor()
        var count = 0
        while true {
            if let job = nextJob() {
                job.runSynchronously(isolatedTo: serial, taskExecutor: task)
                count += 1
                if count & 0xFFF == 0 { ran.withLock { $0 = count } }
                continue
            }
            ran.withLock { $0 = count }
            condition.lock()
            let done = stopped
            condition.unlock()
            if done { return }
            if clock.advanceToNextDeadline() { continue }
            condition.lock()
            while head == jobs.count && !stopped { condition.wait() }
            condition.unlock()
        }
    }

    /// Ends ``drive(_:)`` once its queue is empty; deadlines still pending are left where they are.
    public func stop() {
        condition.lock()
        stopped = true
        condition.signal()
        condition.unlock()
    }

    /// Runs `body` on a thread of its own driving this executor and `clock`, with every task `body` starts preferring
    /// this executor, and returns its value once it ends.
    public func run<T: Sendable>(clock: SimulationClock, _ body: @escaping @Sendable () async -> T) async -> T {
        let thread = Thread { [self] in drive(clock) }
        thread.name = "authload-simulation"
        thread.start()
        let task = Task(executorPreference: self) { await body() }
        let value = await task.value
        stop()
        return value
    }
}
