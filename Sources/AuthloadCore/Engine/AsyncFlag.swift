/// A one-way switch that tasks can wait on: once set, every waiter (present and future) goes on.
///
/// A waiting task that is cancelled stops waiting, so a flag can take part in a race.
public final class AsyncFlag: Sendable {
    private struct State {
        var isSet = false
        var nextID: UInt64 = 0
        var waiters: [UInt64: CheckedContinuation<Void, Never>] = [:]
        var actions: [@Sendable () -> Void] = []
    }

    private let state = Locked(State())

    public init() {}

    public var isSet: Bool { state.withLock { $0.isSet } }

    public func set() {
        let (waiters, actions) = state.withLock { state in
            state.isSet = true
            defer {
                state.waiters = [:]
                state.actions = []
            }
            return (state.waiters, state.actions)
        }
        // Resumed outside the lock: a resumed task may run inline and come back to this flag. In the order they
        // began to wait, not the dictionary's (seeded per process): a simulated run must replay the same way.
        for id in waiters.keys.sorted() { waiters[id]?.resume() }
        for action in actions { action() }
    }

    /// Runs `action` once the flag is set, after the waiters it resumes (at once, here, when it is set already).
    public func whenSet(_ action: @escaping @Sendable () -> Void) {
        let now = state.withLock { state in
            if !state.isSet { state.actions.append(action) }
            return state.isSet
        }
        if now { action() }
    }

    /// Returns once the flag is set, or at once when the calling task is (or gets) cancelled.
    ///
    /// Inlined (the scheduler sleeps on a flag at every wake): its entry and return were two more executor checks.
    @inline(__always)
    public func wait() async {
        let id = state.withLock { state in
            defer { state.nextID += 1 }
            return state.nextID
        }
        // The runtime's entry point without an isolation parameter, as `SingleConnectionClient.send` uses: the one taking
        // `isolation` checks the executor on entry and on return, each check under the task's status lock when the task
        // prefers an executor (the scheduler of a simulation, at every wake).
        await _unsafeInheritExecutor_withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = state.withLock { state in
                    if state.isSet || Task.isCancelled { return true }
                    state.waiters[id] = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            let waiter = state.withLock { $0.waiters.removeValue(forKey: id) }
            waiter?.resume()
        }
    }
}

/// Runs the operations together and returns as soon as the first finishes, cancelling the rest.
public func race(_ operations: @Sendable () async -> Void...) async {
    await withTaskGroup(of: Void.self) { group in
        for operation in operations { group.addTask(operation: operation) }
        await group.next()
        group.cancelAll()
    }
}
