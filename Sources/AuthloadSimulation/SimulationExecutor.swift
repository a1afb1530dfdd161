import AuthloadCore
import CSystem
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
/// happen to take: the same seed would give different runs. Here the run's tasks, its users' actors (the transport
/// offers this executor) and the services' timers all run on this thread, one job at a time in the order they became
/// ready, so an empty queue means the run is waiting and the order of events is a function of the seed alone.
///
/// The run's own few tasks prefer this executor (SE-0417). Users' tasks prefer nothing: they start isolated to the
/// actors' executor (`UserTasks`), and the code they run inherits that isolation (its modules are built with
/// `NonisolatedNonsendingByDefault`). A preference costs the runtime a look-up under the task's status lock at every
/// executor check, about 7 % of a simulated day. What such a task hands to Swift's global executor from this thread
/// (a continuation the clock resumes has no executor to return to) the runtime's global-enqueue hook sends back here
/// (`authload_divert_global_jobs`), while ``drive(_:)`` runs.
///
/// A job runs as what it was enqueued as. A job for a user's actor runs isolated to the actor's executor (a twin of
/// this one, ``asUnownedSerialExecutor()``); a job for a task that prefers this executor, with no isolation of its own,
/// runs on this executor with no serial executor active. Run isolated to a serial executor, nonisolated code finds
/// itself on the wrong executor at every call into a nonisolated async function and hops (a job each time), and each
/// hop lands it isolated again: that was about half of a simulated run's jobs (docs/development.md). An isolated job
/// runs with no task executor: a user's task prefers none, and with one active it would hop at every executor check.
/// A task that prefers this executor and enters an actor hops at every check instead; the run's own tasks hardly do.
///
/// Almost every job is enqueued by the driver's own thread (a job that resumes another, a timer that wakes a
/// sleeper): those go to a queue only that thread touches, with no lock. Jobs may also come from any other thread
/// (the first job of ``run(clock:_:)``, a signal's stop request resuming a waiter): those go to a locked inbox that
/// the driver empties into its queue whenever the queue runs dry, and that it sleeps on when nothing else is left.
public final class SimulationExecutor: SerialExecutor, TaskExecutor, @unchecked Sendable {
    /// The driver's queue. Unchecked Sendable: only the thread in ``drive(_:)`` (the one `driver` names) reads or
    /// writes it, and enqueues from any other thread go to `inbox` instead. It empties all the time, so it keeps its
    /// storage.
    private var queue = FIFOQueue<QueuedJob>(keptCapacity: .max)
    /// The driving thread's id, 0 until ``drive(_:)`` starts.
    private let driver = Atomic<UInt>(0)
    private let inbox = Inbox()
    /// Jobs run so far, for the progress line and tests.
    private let ran = Atomic<Int>(0)
    /// Jobs this thread handed to Swift's global executor and kept, for tests. Written by the driver's thread alone.
    private let diverted = Atomic<Int>(0)
    /// The serial executor of the actors that run here: its jobs go to this executor's queue, marked isolated.
    private let isolation = ActorJobs()
    /// Set by the driver while the clock resumes a sleeper that waits isolated to its actor: the task's job that
    /// resume enqueues runs isolated, as its actor's would. Only the driver's thread reads or writes it.
    private var resumingIsolated = false

    public init() {
        isolation.owner = self
    }

    /// A task's job: it runs on this executor as its task executor, isolated to nothing — unless the clock is
    /// resuming a sleeper that waits isolated to its actor (see ``drive(_:)``).
    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        if driver.load(ordering: .relaxed) == Self.currentThread {
            queue.append(QueuedJob(job: job, isolated: resumingIsolated))
        } else {
            inbox.post(QueuedJob(job: job, isolated: false))
        }
    }

    fileprivate func enqueue(_ job: QueuedJob) {
        if driver.load(ordering: .relaxed) == Self.currentThread {
            queue.append(job)
        } else {
            inbox.post(job)
        }
    }

    /// The twin that actors run on (a user's ``VirtualUser``): same thread, same queue, but its jobs run isolated.
    public func asUnownedSerialExecutor() -> UnownedSerialExecutor { UnownedSerialExecutor(ordinary: isolation) }

    /// Jobs run so far.
    public var jobsRun: Int { ran.load(ordering: .relaxed) }

    /// Jobs enqueued by other threads so far: the first of ``run(clock:_:)``, a stop request's wake. A job of the run that
    /// left this thread would come back through here.
    public var jobsFromOtherThreads: Int { inbox.posts }

    /// Runs jobs on the calling thread, moving `clock` whenever none is ready, until ``stop()``.
    ///
    /// When neither a job nor a deadline is left, it waits for a job from another thread (or the stop).
    public func drive(_ clock: SimulationClock) {
        driver.store(Self.currentThread, ordering: .releasing)
        authload_divert_global_jobs(Unmanaged.passUnretained(self).toOpaque(), divertedJob)
        defer {
            authload_divert_global_jobs(nil, nil)
            driver.store(0, ordering: .releasing)
        }
        let serial = asUnownedSerialExecutor()
        let task = asUnownedTaskExecutor()
        var count = 0
        while true {
            while let queued = queue.popFirst() {
                if queued.isolated {
                    queued.job.runSynchronously(on: serial)
                } else {
                    queued.job.runSynchronously(on: task)
                }
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
            // A sleeper that waits isolated to its actor resumes there: the continuation hands its task to this
            // executor as a task's job, and run isolated to nothing, the task's first act would be to hop to its
            // actor, one more job. Run isolated, it finds itself on the actors' executor already. Were the actor one
            // of another executor, the task would hop to it as it does from anywhere else.
            let advanced = clock.advanceToNextDeadline { resume in
                resumingIsolated = true
                resume()
                resumingIsolated = false
            }
            if advanced { continue }
            inbox.waitForPost()
        }
    }

    /// A job this thread handed to Swift's global executor: a user's task (which prefers no executor) resumed by the
    /// clock. It stays here, isolated when the clock is resuming a sleeper that waits isolated.
    fileprivate func divert(_ job: UnownedJob) {
        queue.append(QueuedJob(job: job, isolated: resumingIsolated))
        diverted.store(diverted.load(ordering: .relaxed) + 1, ordering: .relaxed)
    }

    /// Jobs the driver's thread handed to Swift's global executor, which stayed on it: the clock's wakes of users' tasks.
    public var jobsFromGlobalExecutor: Int { diverted.load(ordering: .relaxed) }

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

    /// Whether the calling thread is the one in ``drive(_:)``.
    fileprivate var isDriving: Bool { driver.load(ordering: .relaxed) == Self.currentThread }

    private static var currentThread: UInt {
        #if canImport(Darwin)
        UInt(bitPattern: pthread_self())
        #else
        UInt(pthread_self())
        #endif
    }
}

/// Where the driver's thread sends its jobs for the global executor (`authload_divert_global_jobs`).
private let divertedJob: authload_job_sink = { context, job in
    Unmanaged<SimulationExecutor>.fromOpaque(context!).takeUnretainedValue().divert(unsafeBitCast(job!, to: UnownedJob.self))
}

/// A job in the driver's queue, and whether it runs isolated to the actors' serial executor.
private struct QueuedJob {
    var job: UnownedJob
    var isolated: Bool
}

/// The serial executor of the actors on a ``SimulationExecutor``: the same queue and thread, its jobs marked to run
/// isolated. A class apart because one type's `enqueue` serves both its executor roles, and the driver must tell them apart.
private final class ActorJobs: SerialExecutor, @unchecked Sendable {
    // Unchecked Sendable: `owner` is set once, in the owner's initializer, before the executor is handed out.
    unowned(unsafe) var owner: SimulationExecutor?

    func enqueue(_ job: consuming ExecutorJob) {
        owner!.enqueue(QueuedJob(job: UnownedJob(job), isolated: true))
    }

    func asUnownedSerialExecutor() -> UnownedSerialExecutor { UnownedSerialExecutor(ordinary: self) }

    /// On the driver's thread, whatever the job, nothing else runs: code there is isolated to this executor.
    func checkIsolated() {
        precondition(owner!.isDriving, "not on the simulation's thread")
    }
}

/// Jobs enqueued from threads other than the driver's, and the stop request, under a condition the idle driver
/// waits on.
private final class Inbox: @unchecked Sendable {
    // Unchecked Sendable: `jobs`, `stopped` and `posted` are read and written only with `condition` locked.
    private let condition = NSCondition()
    private var jobs: [QueuedJob] = []
    private var stopped = false
    private var posted = 0

    var posts: Int {
        condition.lock()
        defer { condition.unlock() }
        return posted
    }

    func post(_ job: QueuedJob) {
        condition.lock()
        jobs.append(job)
        posted += 1
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
    func take() -> (jobs: [QueuedJob], stopped: Bool) {
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
