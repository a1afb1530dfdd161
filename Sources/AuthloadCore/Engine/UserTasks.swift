/// The tasks that run users' flows (the closed model's turns, the open model's workers): unstructured tasks, held by
/// key so the run can cancel them together when its grace period runs out, and wait for them to end.
///
/// Not children of a task group: a group keeps its children in a list that each ending child is looked up in,
/// so with thousands of users mid-flow every flow's end walked thousands of entries, and that came to dominate the
/// generator's CPU (docs/development.md, "Measured design choices"). Here starting and ending a task costs the same
/// however many run.
final class UserTasks: Sendable {
    private struct State {
        var tasks: [Int: Task<Void, Never>] = [:]
        /// Tasks that ended before their start could record them.
        var endedEarly: Set<Int> = []
        var running = 0
        var cancelled = false
        var idleWaiters: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Locked(State())

    /// Runs `operation` in a task of its own, preferring `executor`; `key` (a user's or a worker's number) must
    /// not be running already.
    func start(_ key: Int, executorPreference executor: (any TaskExecutor)?, _ operation: @escaping @Sendable () async -> Void) {
        state.withLock { $0.running += 1 }
        let task = Task(executorPreference: executor) {
            self.cancelIfLate()
            await operation()
            self.ended(key)
        }
        hold(task, key: key)
    }

    /// Started after cancelAll(): the task runs cancelled from its first line.
    private func cancelIfLate() {
        if state.withLock({ $0.cancelled }) { withUnsafeCurrentTask { $0?.cancel() } }
    }

    private func hold(_ task: Task<Void, Never>, key: Int) {
        let cancel = state.withLock { state in
            if state.endedEarly.remove(key) == nil { state.tasks[key] = task }
            return state.cancelled
        }
        if cancel { task.cancel() }
    }

    private func ended(_ key: Int) {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            if state.tasks.removeValue(forKey: key) == nil { state.endedEarly.insert(key) }
            state.running -= 1
            guard state.running == 0 else { return [] }
            defer { state.idleWaiters = [] }
            return state.idleWaiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Cancels every task running now, and every task started from now on.
    func cancelAll() {
        let tasks = state.withLock { state in
            state.cancelled = true
            // By key, not in the dictionary's order (seeded per process): a simulated run must replay the same way.
            return state.tasks.sorted { $0.key < $1.key }.map(\.value)
        }
        for task in tasks { task.cancel() }
    }

    /// Returns once no task runs; cancelling the caller does not cut the wait short (cancel the tasks instead).
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
