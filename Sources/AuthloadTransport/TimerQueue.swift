/// Identifies a scheduled timer so it can be cancelled.
struct TimerID: Hashable {
    fileprivate let value: UInt64
}

/// Timers of one event loop: a binary min-heap of deadlines with lazy cancellation.
///
/// Cancelling only forgets the callback; the heap entry is skipped when it comes up. Every request
/// schedules a timeout and almost all are cancelled, so this keeps cancel O(1).
struct TimerQueue {
    private var heap: [(deadline: Int64, id: UInt64)] = []
    private var callbacks: [UInt64: () -> Void] = [:]
    private var nextID: UInt64 = 0

    mutating func schedule(at deadline: Int64, _ callback: @escaping () -> Void) -> TimerID {
        nextID += 1
        callbacks[nextID] = callback
        heap.append((deadline, nextID))
        siftUp(heap.count - 1)
        return TimerID(value: nextID)
    }

    mutating func cancel(_ timer: TimerID) {
        callbacks[timer.value] = nil
    }

    /// How long epoll may block, in nanoseconds: until the next live deadline, -1 (forever) when there is none.
    mutating func nanosecondsUntilNext(now: Int64) -> Int64 {
        dropCancelled()
        guard let first = heap.first else { return -1 }
        return max(0, first.deadline - now)
    }

    /// Removes and returns the next callback whose deadline has come.
    ///
    /// The caller runs it outside any mutation of the queue: a callback may schedule or cancel timers.
    mutating func popDue(now: Int64) -> (() -> Void)? {
        while let first = heap.first, first.deadline <= now {
            popFirst()
            if let callback = callbacks.removeValue(forKey: first.id) { return callback }
        }
        return nil
    }

    private mutating func dropCancelled() {
        while let first = heap.first, callbacks[first.id] == nil { popFirst() }
    }

    private mutating func popFirst() {
        heap.swapAt(0, heap.count - 1)
        heap.removeLast()
        if !heap.isEmpty { siftDown(0) }
    }

    private mutating func siftUp(_ index: Int) {
        var child = index
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].deadline < heap[parent].deadline else { return }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    private mutating func siftDown(_ index: Int) {
        var parent = index
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var smallest = parent
            if left < heap.count && heap[left].deadline < heap[smallest].deadline { smallest = left }
            if right < heap.count && heap[right].deadline < heap[smallest].deadline { smallest = right }
            if smallest == parent { return }
            heap.swapAt(parent, smallest)
            parent = smallest
        }
    }
}
