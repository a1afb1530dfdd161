import AuthloadCore

/// Identifies a scheduled timer so it can be cancelled.
struct TimerID: Hashable {
    fileprivate let value: UInt64
}

/// Timers of one event loop: a binary min-heap of deadlines with lazy cancellation.
///
/// Cancelling only forgets the callback; the heap entry is skipped when it comes up. Every request
/// schedules a timeout and almost all are cancelled, so this keeps cancel O(1).
struct TimerQueue {
    /// By deadline, then by id: timers due together fire in the order they were scheduled.
    private struct Entry: Comparable {
        var deadline: MonotonicInstant
        var id: UInt64

        static func < (a: Entry, b: Entry) -> Bool { a.deadline < b.deadline || (a.deadline == b.deadline && a.id < b.id) }
    }

    private var heap = MinHeap<Entry>()
    private var callbacks: [UInt64: () -> Void] = [:]
    private var nextID: UInt64 = 0

    mutating func schedule(at deadline: MonotonicInstant, _ callback: @escaping () -> Void) -> TimerID {
        nextID += 1
        callbacks[nextID] = callback
        heap.push(Entry(deadline: deadline, id: nextID))
        return TimerID(value: nextID)
    }

    mutating func cancel(_ timer: TimerID) {
        callbacks[timer.value] = nil
    }

    /// When the next live timer is due; nil when there is none.
    mutating func nextDeadline() -> MonotonicInstant? {
        dropCancelled()
        return heap.top?.deadline
    }

    /// Removes and returns the next callback whose deadline has come.
    ///
    /// The caller runs it outside any mutation of the queue: a callback may schedule or cancel timers.
    mutating func popDue(now: MonotonicInstant) -> (() -> Void)? {
        while let first = heap.top, first.deadline <= now {
            heap.pop()
            if let callback = callbacks.removeValue(forKey: first.id) { return callback }
        }
        return nil
    }

    private mutating func dropCancelled() {
        while let first = heap.top, callbacks[first.id] == nil { heap.pop() }
    }
}
