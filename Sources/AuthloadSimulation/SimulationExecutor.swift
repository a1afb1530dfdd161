import AuthloadCore
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

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
/// Almost every job is enqueued by the driver's own thread (a job that resumes another, a timer that wakes a
/// sleeper): those go to a queue only that thread touches, with no lock. Jobs may also come from any other thread
/// (the first job of ``run(clock:_:)``, a signal's stop request resuming a waiter): those go to a locked inbox that
/// the driver empties into its queue whenever the queue runs dry, and that it sleeps on when nothing else is left.
public final class SimulationExecutor: SerialExecutor, TaskExecutor, @unchecked Sendable {
    /// The driver's queue. Unchecked Sendable: only the thread in ``drive(_:)`` (the one `driver` names) reads or
    /// writes it, and enqueues from any other thread go to `inbox` instead. It empties all the time, so it keeps its
    /// storage.
    private var queue = FIFOQueue<UnownedJob>(keptCapacity: .max)
    /// The driving thread's id, 0 until ``drive(_:)`` starts.
    private let driver = Atomic<UInt>(0)
    private let inbox = Inbox()
    /// Jobs run so far, for the progress line and tests.
    private let ran = Atomic<Int>(0)

    public init() {}

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        if driver.load(ordering: .relaxed) == Self.currentThread {
            queue.append(job)
        } else {
            inbox.post(job)
        }
    }

    public func asUnownedSerialExecutor() -> UnownedSerialExecutor { UnownedSerialExecutor(ordinary: self) }

    /// Jobs run so far.
    public var jobsRun: Int { ran.load(ordering: .relaxed) }

    /// Runs jobs on the calling thread, moving `clock` whenever none is ready, until ``stop()``.
    ///
    /// When neither a job nor a deadline is left, it waits for a job from another thread (or the stop).
    public func drive(_ clock: SimulationClock) {
        driver.store(Self.currentThread, ordering: .releasing)
        defer { driver.store(0, ordering: .releasing) }
        let serial = asUnownedSerialExecutor()
        let task = asUnownedTaskExecutor()
        var count = 0
        while true {
            while let job = queue.popFirst() {
                job.runSynchronously(isolatedTo: serial, taskExecutor: task)
                count += 1
            }
            ran.store(count, ordering: .relaxed)
            // Jobs from other threads come after the ones this thread queued; the order among them is theirs.
            let posted = inbox.take()
            if !posted.jobs.isEmpty {
                for job in posted.jobs { queue.append(job) }
                continue
            }
            if posted.stopped { return }
            if clock.advanceToNextDeadline() { continue }
            inbox.waitForPost()
        }
    }

    /// Ends ``drive(_:)`` once its queue is empty; deadlines still pending are left where they are.
    public func stop() { inbox.stop() }

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

    private static var currentThread: UInt {
        #if canImport(Darwin)
        UInt(bitPattern: pthread_self())
        #else
        UInt(pthread_self())
        #endif
    }
}

/// Jobs enqueued from threads other than the driver's, and the stop request, under a condition the idle driver
/// waits on.
private final class Inbox: @unchecked Sendable {
    // Unchecked Sendable: `jobs` and `stopped` are read and written only with `condition` locked.
    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []
    private var stopped = false

    func post(_ job: UnownedJob) {
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    func stop() {
        condition.lock()
        stopped = true
        condition.signal()
        condition.unlock()
    }

    /// Everything posted so far, and whether a stop was asked for.
    func take() -> (jobs: [UnownedJob], stopped: Bool) {
        condition.lock()
        defer { condition.unlock() }
        defer { jobs.removeAll() }
        return (jobs, stopped)
    }

    /// Returns once a job or the stop is posted (at once when one waits already).
    func waitForPost() {
        condition.lock()
        while jobs.isEmpty && !stopped { condition.wait() }
        condition.unlock()
    }
}
