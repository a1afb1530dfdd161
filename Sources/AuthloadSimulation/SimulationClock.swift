import AuthloadCore

/// Virtual time for a simulated run: it stands still while anything can run, and the ``SimulationDriver`` moves it
/// to the next deadline once nothing can.
///
/// Sleeping tasks and timers (a staging service's paced WebSocket messages, a receive's timeout) wait in one
/// min-heap ordered by deadline and then by the order they were registered, so events due at the same instant
/// always come out in the same order: with every job on one thread, a run is a pure function of its seed.
///
/// Unlike `ManualClock` (AuthloadTesting), nothing here watches for a quiet run: the driver knows, because
/// its job queue is empty.
public final class SimulationClock: Clock, Sendable {
    public typealias Instant = VirtualInstant

    private enum Wake {
        case sleeper(CheckedContinuation<Void, any Error>)
        case work(@Sendable () -> Void)
    }

    private struct Due: Comparable {
        var deadline: Instant
        var id: UInt64

        static func < (a: Due, b: Due) -> Bool { a.deadline < b.deadline || (a.deadline == b.deadline && a.id < b.id) }
    }

    private struct State {
        var now = Instant(offset: .zero)
        var nextID: UInt64 = 0
        var wakes: [UInt64: Wake] = [:]
        /// Entries of cancelled sleepers and timers stay until they surface, and are skipped then.
        var heap = MinHeap<Due>()

        mutating func pruneTop() {
            while let top = heap.top, wakes[top.id] == nil { heap.pop() }
        }
    }

    private let state = Locked(State())

    public init() {}

    public var now: Instant { state.withLock { $0.now } }
    public var minimumResolution: Duration { .zero }

    /// Sleepers and timers not yet due.
    public var pending: Int { state.withLock { $0.wakes.count } }

    /// The earliest deadline of a live sleeper or timer.
    public var nextDeadline: Instant? {
        state.withLock { state in
            state.pruneTop()
            return state.heap.top?.deadline
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
                let resumeNow = state.withLock { state in
                    if deadline <= state.now || Task.isCancelled { return true }
                    state.wakes[id] = .sleeper(continuation)
                    state.heap.push(Due(deadline: deadline, id: id))
                    return false
                }
                if resumeNow {
                    if Task.isCancelled { continuation.resume(throwing: CancellationError()) } else { continuation.resume() }
                }
            }
        } onCancel: {
            let wake = state.withLock { $0.wakes.removeValue(forKey: id) }
            if case .sleeper(let continuation) = wake { continuation.resume(throwing: CancellationError()) }
        }
    }

    /// Runs `work` on the driver's thread once the clock reaches `deadline` (at once in the next advance when it
    /// has passed). Returns a handle for ``cancel(_:)``.
    @discardableResult
    public func schedule(at deadline: Instant, _ work: @escaping @Sendable () -> Void) -> UInt64 {
        state.withLock { state in
            let id = state.nextID
            state.nextID += 1
            state.wakes[id] = .work(work)
            state.heap.push(Due(deadline: max(deadline, state.now), id: id))
            return id
        }
    }

    /// Calls off a timer from ``schedule(at:_:)`` that has not run yet.
    public func cancel(_ timer: UInt64) {
        _ = state.withLock { $0.wakes.removeValue(forKey: timer) }
    }

    /// Moves the clock to the earliest deadline and wakes everyone due then, in the order they were registered:
    /// sleepers are resumed (their jobs go to the executor's queue), timers run here. False when nobody waits.
    @discardableResult
    public func advanceToNextDeadline() -> Bool {
        let due = state.withLock { state -> [Wake] in
            state.pruneTop()
            guard let first = state.heap.top else { return [] }
            state.now = max(state.now, first.deadline)
            var due: [Wake] = []
            while let top = state.heap.top, top.deadline <= state.now {
                state.heap.pop()
                if let wake = state.wakes.removeValue(forKey: top.id) { due.append(wake) }
            }
            return due
        }
        for wake in due {
            switch wake {
            case .sleeper(let continuation): continuation.resume()
            case .work(let work): work()
            }
        }
        return !due.isEmpty
    }
}
