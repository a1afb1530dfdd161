/// A first-in, first-out queue: append and removal from the front in O(1) (amortized).
///
/// `Array.removeFirst()` moves every element behind the first; a queue of thousands of waiters (users waiting for
/// a pooled connection when the server falls behind) made each hand-off cost as much as the queue was long.
public struct FIFOQueue<Element> {
    @usableFromInline var items: [Element?] = []
    @usableFromInline var head = 0

    @inlinable public init() {}

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
        // Drop the consumed front once it is most of the storage: each element is moved at most once more.
        if head >= 64 && head * 2 >= items.count {
            items.removeFirst(head)
            head = 0
        }
        return first
    }
}

extension FIFOQueue: Sendable where Element: Sendable {}
