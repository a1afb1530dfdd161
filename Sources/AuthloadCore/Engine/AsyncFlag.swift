/// A one-way switch that tasks can wait on: once set, every waiter (present and future) goes on.
///
/// A waiting task that is cancelled stops waiting, so a flag can take part in a race.
public final class AsyncFlag: Sendable {
    private typealias Waiter = (id: UInt64, continuation: UnsafeContinuation<Void, Never>)

    /// Waiters are held apart from a list for the first: a flag is usually waited on by one task (the closed model's
    /// scheduler makes one for each of its sleeps), and a dictionary of waiters, its keys sorted and a checked
    /// continuation cost it four allocations a sleep.
    private struct State {
        var isSet = false
        var nextID: UInt64 = 0
        var first: Waiter?
        var more: [Waiter] = []
        var actions: [@Sendable () -> Void] = []

        /// Takes the waiter `id` out, if it still waits.
        mutating func remove(_ id: UInt64) -> UnsafeContinuation<Void, Never>? {
            if let first, first.id == id {
                self.first = nil
                return first.continuation
            }
            guard let index = more.firstIndex(where: { $0.id == id }) else { return nil }
            return more.remove(at: index).continuation
        }
    }

    private let state = Locked(State())

    public init() {}

    public var isSet: Bool { state.withLock { $0.isSet } }

    public func set() {
        let (first, more, actions) = state.withLock { state in
            state.isSet = true
            defer {
                state.first = nil
                state.more = []
                state.actions = []
            }
            return (state.first, state.more, state.actions)
        }
        // Resumed outside the lock: a resumed task may run inline and come back to this flag. In the order they
        // began to wait (a simulated run must replay the same way), which is not always the order they were added.
        if more.isEmpty {
            first?.continuation.resume()
        } else {
            var waiters = more
            if let first { waiters.append(first) }
            waiters.sort { $0.id < $1.id }
            for waiter in waiters { waiter.continuation.resume() }
        }
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
            // Unsafe rather than checked: each continuation is resumed once, by whoever takes it out under the lock.
            await withUnsafeContinuation { (continuation: UnsafeContinuation<Void, Never>) in
                let resumeNow = state.withLock { state in
                    if state.isSet || Task.isCancelled { return true }
                    if state.first == nil {
                        state.first = (id, continuation)
                    } else {
                        state.more.append((id, continuation))
                    }
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            let waiter = state.withLock { $0.remove(id) }
            waiter?.resume()
        }
    }
}

/// Runs the operations together and returns as soon as the first finishes, cancelling the rest.
public func race(_ operations: @concurrent @Sendable () async -> Void...) async {
    await withTaskGroup(of: Void.self) { group in
        for operation in operations { group.addTask(operation: operation) }
        await group.next()
        group.cancelAll()
    }
}
