/// A first-in, first-out queue: append and removal from the front in O(1) (amortized).
///
/// `Array.removeFirst()` moves every element behind the first; a queue of thousands of waiters (users waiting for
/// a pooled connection when the server falls behind) made each hand-off cost as much as the queue was long.
///
/// A queue that empties starts again at the front of its storage, and lets the storage go unless it holds no more
/// than `keptCapacity` elements: a queue per held connection (a WebSocket's unread messages) then costs nothing while
/// empty, and a hot queue that empties all the time (a driver's jobs) keeps its storage with `keptCapacity: .max`.
public struct FIFOQueue<Element> {
    @usableFromInline var items: [Element?] = []
    @usableFromInline var head = 0
    @usableFromInline let keptCapacity: Int

    /// - Parameter keptCapacity: the largest storage, in elements, kept when the queue empties.
    @inlinable public init(keptCapacity: Int = 16) {
        self.keptCapacity = keptCapacity
    }

    @inlinable public var isEmpty: Bool { head == items.count }
    @inlinable public var count: Int { items.count - head }

    @inlinable
    public mutating func append(_ element: Element) { items.append(element) }

    /// Removes and returns the oldest element, if any.
    @inlinable
    public mutating func popFirst() -> Element? {
        guard head < items.count else { return nil }
        let first = items[head]
        items[head] = nil
        head += 1
        if head == items.count {
            items.removeAll(keepingCapacity: items.capacity <= keptCapacity)
            head = 0
        } else if head >= 64 && head * 2 >= items.count {
            // Drop the consumed front once it is most of the storage: each element is moved at most once more.
            items.removeFirst(head)
            head = 0
        }
        return first
    }

    /// Removes the elements that satisfy `shouldBeRemoved`, keeping the others in their order.
    @inlinable
    public mutating func removeAll(where shouldBeRemoved: (Element) throws -> Bool) rethrows {
        var kept: [Element?] = []
        kept.reserveCapacity(count)
        for element in self where try !shouldBeRemoved(element) { kept.append(element) }
        items = kept
        head = 0
        if items.isEmpty { items.removeAll(keepingCapacity: items.capacity <= keptCapacity) }
    }
}

extension FIFOQueue: Sequence {
    /// The elements from the oldest on.
    public struct Iterator: IteratorProtocol {
        @usableFromInline var remaining: ArraySlice<Element?>

        @inlinable init(_ remaining: ArraySlice<Element?>) { self.remaining = remaining }

        @inlinable
        public mutating func next() -> Element? { remaining.popFirst() ?? nil }
    }

    @inlinable public func makeIterator() -> Iterator { Iterator(items[head...]) }
    @inlinable public var underestimatedCount: Int { count }
}

extension FIFOQueue: Sendable where Element: Sendable {}
