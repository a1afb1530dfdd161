/// The open model's workers of one executor: long-lived tasks that each run arrivals one after another, parked
/// on a continuation between them (k6 calls them pre-allocated VUs).
///
/// A task per arrival cost its creation, its first slabs (which exceed malloc's per-thread cache, so every arrival
/// went to malloc's slow path) and its end, more than an arrival's two requests cost the rest of the engine. A
/// worker keeps its task and slabs: the generator hands each admitted arrival to the worker that parked last
/// (``hand(_:)``, LIFO, so its slabs are still in the cache), and starts a new worker only when none is parked.
///
/// Not a scheduler: it holds only the parked workers. Who runs (the tasks, their cancellation, the wait for their end)
/// stays with the run's ``UserTasks``.
///
/// ```swift
/// if !workers.hand(arrival) { startWorker(arrival) }                // the generator
/// while let arrival = await workers.next(parked: visitEnded) { … }   // a worker, between visits
/// ```
final class ArrivalWorkers<Arrival: Sendable>: Sendable {
    private struct State {
        /// The parked workers, the one that parked last at the end.
        var idle: [UnsafeContinuation<Arrival?, Never>] = []
        var closed = false
    }

    private let state = Locked(State())
    /// Where the workers' arrivals run (the event loop that carries their requests); nil for Swift's pool.
    let executor: (any SerialExecutor & TaskExecutor)?
    /// The most workers parked at once; a worker that finds this many parked ends instead, so a burst of thousands of
    /// users does not keep its tasks' memory for the rest of the run.
    let maxIdle: Int

    init(executor: (any SerialExecutor & TaskExecutor)?, maxIdle: Int = 1_024) {
        self.executor = executor
        self.maxIdle = maxIdle
    }

    /// Hands `arrival` to the worker that parked last; false when none is parked (the caller starts a new one).
    func hand(_ arrival: Arrival) -> Bool {
        guard let worker = state.withLock({ $0.idle.popLast() }) else { return false }
        worker.resume(returning: arrival)
        return true
    }

    /// Parks the calling worker until an arrival is handed to it; nil once ``close()`` was called, or when
    /// ``maxIdle`` workers are parked already: the worker should then end.
    ///
    /// - Parameter parked: called once the worker is parked (or has found it must end), before it waits: the end of
    ///   its visit's live count, so that a virtual-time driver sees the run quiet only once the worker can be handed
    ///   the next arrival.
    func next(isolation: isolated (any Actor)? = #isolation, parked: () -> Void) async -> Arrival? {
        await withUnsafeContinuation(isolation: isolation) { (continuation: UnsafeContinuation<Arrival?, Never>) in
            let waits = state.withLock { state in
                guard !state.closed, state.idle.count < maxIdle else { return false }
                state.idle.append(continuation)
                return true
            }
            parked()
            if !waits { continuation.resume(returning: nil) }
        }
    }

    /// Ends every parked worker, and every worker that would park from now on: generation has ended.
    func close() {
        let idle = state.withLock { state in
            state.closed = true
            defer { state.idle = [] }
            return state.idle
        }
        for worker in idle { worker.resume(returning: nil) }
    }

    /// Workers parked now.
    var idleCount: Int { state.withLock { $0.idle.count } }
}

/// An actor with nothing in it but an executor it is lent: the isolation of the open model's generator on an event loop,
/// and the one a simulation's users' tasks start in (``UserTasks``).
actor LoopIsolation {
    private nonisolated let executor: any SerialExecutor

    init(_ executor: any SerialExecutor) {
        self.executor = executor
    }

    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
}
