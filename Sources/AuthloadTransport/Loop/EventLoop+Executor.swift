/// An event loop as the executor of the virtual users whose requests it carries: a user's actor runs on
/// its loop (`SerialExecutor`), and so does the rest of the user's task (`TaskExecutor`), so sending a
/// request and resuming on its response take no thread hop.
///
/// Without this, each request costs two hops: the user's actor (on Swift's global pool) hands the
/// request to the loop's thread, and the response resumes the task back on the pool, which wakes a pool
/// thread through a futex. On the benchmark's one core that is two context switches per request. With
/// it, the loop runs the users' jobs after each round of I/O, as wrk runs its callbacks.
///
/// Both roles are needed: a continuation always resumes its task on the generic executor, which the
/// task-executor preference sends to the loop; the task then hops onto its user's actor, on the same loop.
///
/// ```swift
/// let user = VirtualUser(index: 0, identity: identity, seed: 1, executor: loop)
/// await withTaskExecutorPreference(loop) { await flow.run(context, user: user) }
/// ```
///
/// Many users share one loop: they are serial with each other, as they were with the loop's I/O anyway.
/// Every job runs isolated to the loop's serial executor, so a user's task moving between its actor and
/// nonisolated code on the same loop continues at once instead of queueing again. A job runs between I/O
/// rounds, so one that computes for long delays the loop's sockets, as any work on the loop does; flows
/// only build requests and read responses.
extension EventLoop: SerialExecutor, TaskExecutor {
    public func enqueue(_ job: consuming ExecutorJob) {
        submit(.job(UnownedJob(job)))
    }

    public func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }

    public func checkIsolated() {
        precondition(inLoop || hasStopped, "expected to run on an event loop's thread")
    }

    /// Runs a user's job; on the loop's thread only.
    func run(_ job: UnownedJob) {
        job.runSynchronously(isolatedTo: asUnownedSerialExecutor(), taskExecutor: asUnownedTaskExecutor())
    }

    /// A job that arrives after the loop stopped (or was still queued then) still runs, in order and one
    /// at a time, so its task can end: on a serial queue that stands in for the loop's thread.
    func runAfterStop(_ job: UnownedJob) {
        afterStop.async { self.run(job) }
    }
}
