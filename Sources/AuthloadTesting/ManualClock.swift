import AuthloadCore

/// A clock that only moves when a test moves it, so time-dependent code runs deterministically.
///
/// Sleepers park until ``advance(to:)`` passes their deadline. ``waitForSleepers(_:)`` tells the test
/// when the code under test has gone quiet, and ``advanceToNextDeadline()`` wakes the earliest sleepers,
/// so hours of virtual time pass in as many steps as there are distinct deadlines.
///
/// ```swift
/// let clock = ManualClock()
/// let task = Task { try await clock.sleep(for: .seconds(5)) }
/// await clock.waitForSleepers(1)
/// clock.advance(by: .seconds(5))
/// try await task.value
/// ```
public final class ManualClock: Clock, Sendable {
    public typealias Instant = VirtualInstant

    private struct Sleeper {
        var deadline: Instant
        var continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var now = Instant(offset: .zero)
        var nextID: UInt64 = 0
        var sleepers: [UInt64: Sleeper] = [:]
        /// Deadlines in a min-heap, so a run with thousands of sleepers finds the next one in O(log n);
        /// entries of cancelled sleepers stay until they surface and are skipped then.
        var deadlines = MinHeap<SleeperDeadline>()
        var sleeperWaiters: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []
        var quietWaiters: [(isQuiet: @Sendable (Int) -> Bool, continuation: CheckedContinuation<Void, Never>)] = []

        /// Drops heap entries whose sleeper is gone; the top is then a live sleeper, if any.
        mutating func pruneTop() {
            while let top = deadlines.top, sleepers[top.id] == nil { deadlines.pop() }
        }
    }

    private let state = Locked(State())

    public init() {}

    public var now: Instant { state.withLock { $0.now } }
    public var minimumResolution: Duration { .zero }
    public var sleeperCount: Int { state.withLock { $0.sleepers.count } }

    /// The earliest deadline anyone sleeps until, if anyone sleeps.
    public var nextDeadline: Instant? {
        state.withLock { state in
            state.pruneTop()
            return state.deadlines.top?.deadline
        }
    }

    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        try Task.checkCancellation()
        let id = state.withLock { state in
            defer { state.nextID += 1 }
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let (resumeNow, waiters) = state.withLock { state -> (Bool, [CheckedContinuation<Void, Never>]) in
                    if deadline <= state.now || Task.isCancelled { return (true, []) }
                    state.sleepers[id] = Sleeper(deadline: deadline, continuation: continuation)
                    state.deadlines.push(SleeperDeadline(deadline: deadline, id: id))
                    return (false, Self.satisfiedWaiters(&state))
                }
                for waiter in waiters { waiter.resume() }
                if resumeNow {
                    if Task.isCancelled { continuation.resume(throwing: CancellationError()) } else { continuation.resume() }
                }
            }
        } onCancel: {
            let sleeper = state.withLock { $0.sleepers.removeValue(forKey: id) }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Returns once at least `count` tasks are asleep on this clock.
    public func waitForSleepers(_ count: Int) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ready = state.withLock { state in
                if state.sleepers.count >= count { return true }
                state.sleeperWaiters.append((count, continuation))
                return false
            }
            if ready { continuation.resume() }
        }
    }

    public func advance(by duration: Duration) {
        advance(to: now.advanced(by: duration))
    }

    /// Moves the clock to `instant` and wakes, earliest first, everyone whose deadline has come.
    public func advance(to instant: Instant) {
        let due = state.withLock { state in
            state.now = max(state.now, instant)
            var due: [Sleeper] = []
            while let top = state.deadlines.top, top.deadline <= state.now {
                state.deadlines.pop()
                if let sleeper = state.sleepers.removeValue(forKey: top.id) { due.append(sleeper) }
            }
            return due
        }
        // Earliest first, and in the order they went to sleep among equal deadlines.
        for sleeper in due { sleeper.continuation.resume() }
    }

    /// Advances to the earliest deadline anyone sleeps until; false when nobody sleeps.
    @discardableResult
    public func advanceToNextDeadline() -> Bool {
        guard let next = nextDeadline else { return false }
        advance(to: next)
        return true
    }

    /// Steps from deadline to deadline until `instant`, each time waiting for `sleepers` tasks to park first.
    ///
    /// Use it when the code under test has a known number of sleepers whenever it is quiet
    /// (e.g. one per virtual user plus the runner's two timers).
    public func run(until instant: Instant, sleepers: Int) async {
        while now < instant {
            await waitForSleepers(sleepers)
            guard let next = nextDeadline else { return }
            advance(to: min(next, instant))
        }
    }

    /// Returns once `isQuiet(sleeperCount)` holds. It is checked now, whenever a task parks, and on ``recheck()``.
    ///
    /// For code whose number of sleepers varies (an open-model run: users come and go), where
    /// ``waitForSleepers(_:)`` needs a number known in advance.
    public func waitUntilQuiet(_ isQuiet: @escaping @Sendable (_ sleepers: Int) -> Bool) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ready = state.withLock { state in
                if isQuiet(state.sleepers.count) { return true }
                state.quietWaiters.append((isQuiet, continuation))
                return false
            }
            if ready { continuation.resume() }
        }
    }

    /// Re-checks the conditions of ``waitUntilQuiet(_:)``: call it when something they read changed
    /// without a task parking (e.g. a task ended).
    public func recheck() {
        let ready = state.withLock { Self.satisfiedWaiters(&$0) }
        for waiter in ready { waiter.resume() }
    }

    private static func satisfiedWaiters(_ state: inout State) -> [CheckedContinuation<Void, Never>] {
        guard !state.sleeperWaiters.isEmpty || !state.quietWaiters.isEmpty else { return [] }
        let count = state.sleepers.count
        var ready = state.sleeperWaiters.filter { $0.count <= count }.map(\.continuation)
        state.sleeperWaiters.removeAll { $0.count <= count }
        var waiting: [(isQuiet: @Sendable (Int) -> Bool, continuation: CheckedContinuation<Void, Never>)] = []
        for waiter in state.quietWaiters {
            if waiter.isQuiet(count) { ready.append(waiter.continuation) } else { waiting.append(waiter) }
        }
        state.quietWaiters = waiting
        return ready
    }
}

/// A sleeper's place in the deadline heap: by deadline, then by id (the order of going to sleep).
struct SleeperDeadline: Comparable {
    var deadline: ManualClock.Instant
    var id: UInt64

    static func < (a: SleeperDeadline, b: SleeperDeadline) -> Bool {
        a.deadline < b.deadline || (a.deadline == b.deadline && a.id < b.id)
    }
}
