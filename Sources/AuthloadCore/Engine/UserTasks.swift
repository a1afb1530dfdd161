/// The tasks that run users' flows (the closed model's turns, the open model's workers): unstructured tasks, held by
/// key so the run can cancel them together when its grace period runs out, and wait for them to end; and the flows
/// held with no task (``FlowHold``), which count as running and are cancelled with them.
///
/// Not children of a task group: a group keeps its children in a list that each ending child is looked up in,
/// so with thousands of users mid-flow every flow's end walked thousands of entries, and that came to dominate the
/// generator's CPU (docs/development.md, "Measured design choices"). Here starting and ending a task costs the same
/// however many run.
final class UserTasks: Sendable {
    private struct State {
        /// By a number of their own: the task that goes on with a held flow may start while the one that held it (same
        /// key) is still returning.
        var tasks: [Int: (key: Int, task: Task<Void, Never>)] = [:]
        /// Tasks that ended before their start could record them.
        var endedEarly: Set<Int> = []
        /// Held flows, by their numbers.
        var holds: [Int: (key: Int, hold: any FlowHold)] = [:]
        var next = 0
        var running = 0
        var cancelled = false
        var idleWaiters: [CheckedContinuation<Void, Never>] = []

        mutating func number() -> Int {
            defer { next += 1 }
            return next
        }
    }

    private let state = Locked(State())
    /// The executor every task starts isolated to (a simulation's), or nil for tasks that prefer theirs.
    private let home: LoopIsolation?

    /// - Parameter executor: the one executor every task runs on, isolated from its first job, with no task-executor
    ///   preference; it must answer ``SerialExecutor/checkIsolated()`` wherever a task is started. Nil: each task
    ///   prefers the executor it is started with.
    init(isolatedTo executor: (any SerialExecutor)? = nil) {
        home = executor.map { LoopIsolation($0) }
    }

    /// Runs `operation` in a task of its own, preferring `executor` (or isolated to the one these tasks were made
    /// for); `key` is a user's or a worker's number.
    func start(_ key: Int, executorPreference executor: (any TaskExecutor)?, _ operation: @escaping @Sendable () async -> Void) {
        let number = state.withLock { state in
            state.running += 1
            return state.number()
        }
        run(number, key: key, executorPreference: executor, operation)
    }

    /// Counts a flow held with no task as running until ``resume(_:key:executorPreference:_:)``; cancelling the tasks
    /// cancels `hold` (at once when they already are).
    ///
    /// - Returns: the hold's number, for ``resume(_:key:executorPreference:_:)``.
    func hold(_ key: Int, _ hold: any FlowHold) -> Int {
        let (number, cancelled) = state.withLock { state in
            state.running += 1
            let number = state.number()
            state.holds[number] = (key, hold)
            return (number, state.cancelled)
        }
        if cancelled { hold.cancel() }
        return number
    }

    /// Goes on with hold `number` in a task of its own, as ``start(_:executorPreference:_:)`` does; it counts as the
    /// same running flow.
    func resume(
        _ number: Int, key: Int, executorPreference executor: (any TaskExecutor)?, _ operation: @escaping @Sendable () async -> Void
    ) {
        let number = state.withLock { state in
            state.holds[number] = nil
            return state.number()
        }
        run(number, key: key, executorPreference: executor, operation)
    }

    private func run(
        _ number: Int, key: Int, executorPreference executor: (any TaskExecutor)?, _ operation: @escaping @Sendable () async -> Void
    ) {
        let task: Task<Void, Never>
        if let home {
            task = home.assumeIsolated { Self.task(isolatedTo: $0, number, operation, of: self) }
        } else {
            task = Task(executorPreference: executor) {
                self.cancelIfLate()
                await operation()
                self.ended(number)
            }
        }
        let cancel = state.withLock { state in
            if state.endedEarly.remove(number) == nil { state.tasks[number] = (key, task) }
            return state.cancelled
        }
        if cancel { task.cancel() }
    }

    /// A task isolated to `home` from its first job: nonisolated code it calls inherits that isolation, so no executor
    /// check looks a preference up under the task's status lock.
    private static func task(
        isolatedTo home: isolated LoopIsolation, _ number: Int, _ operation: @escaping @Sendable () async -> Void, of tasks: UserTasks
    ) -> Task<Void, Never> {
        Task {
            // Naming `home` makes the closure isolated to it (SE-0420), so the task's first job goes to its executor.
            home.preconditionIsolated()
            tasks.cancelIfLate()
            await operation()
            tasks.ended(number)
        }
    }

    /// Started after cancelAll(): the task runs cancelled from its first line.
    private func cancelIfLate() {
        if state.withLock({ $0.cancelled }) { withUnsafeCurrentTask { $0?.cancel() } }
    }

    private func ended(_ number: Int) {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            if state.tasks.removeValue(forKey: number) == nil { state.endedEarly.insert(number) }
            state.running -= 1
            guard state.running == 0 else { return [] }
            defer { state.idleWaiters = [] }
            return state.idleWaiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Cancels every task running now and every held flow, and every task started from now on.
    func cancelAll() {
        let (tasks, holds) = state.withLock { state in
            state.cancelled = true
            // By key, not in the dictionary's order (seeded per process): a simulated run must replay the same way.
            return (
                state.tasks.sorted { ($0.value.key, $0.key) < ($1.value.key, $1.key) }.map(\.value.task),
                state.holds.sorted { ($0.value.key, $0.key) < ($1.value.key, $1.key) }.map(\.value.hold)
            )
        }
        for task in tasks { task.cancel() }
        for hold in holds { hold.cancel() }
    }

    /// Returns once no task runs and no flow is held; cancelling the caller does not cut the wait short (cancel the
    /// tasks instead).
    func waitUntilNoneRun() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = state.withLock { state in
                guard state.running > 0 else { return true }
                state.idleWaiters.append(continuation)
                return false
            }
            if now { continuation.resume() }
        }
    }
}
