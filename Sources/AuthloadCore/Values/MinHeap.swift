/// A binary min-heap: the smallest element on top; push and pop in O(log n), top in O(1).
///
/// The one heap of the code base: the event loop's timers, the closed model's waiting users and the manual
/// clock's sleepers all keep their deadlines in one. Elements that compare equal come out in no set order,
/// so an element that needs one breaks ties itself (by a sequence number, say).
public struct MinHeap<Element: Comparable> {
    @usableFromInline var items: [Element] = []

    @inlinable public init() {}

    @inlinable public var top: Element? { items.first }
    @inlinable public var isEmpty: Bool { items.isEmpty }
    @inlinable public var count: Int { items.count }

    @inlinable
    public mutating func push(_ element: Element) {
        items.append(element)
        var child = items.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard items[child] < items[parent] else { return }
            items.swapAt(child, parent)
            child = parent
        }
    }

    /// Removes and returns the smallest element, if any.
    @inlinable
    @discardableResult
    public mutating func pop() -> Element? {
        guard !items.isEmpty else { return nil }
        items.swapAt(0, items.count - 1)
        let smallest = items.removeLast()
        var parent = 0
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var next = parent
            if left < items.count, items[left] < items[next] { next = left }
            if right < items.count, items[right] < items[next] { next = right }
            guard next != parent else { return smallest }
            items.swapAt(parent, next)
            parent = next
        }
    }
}

extension MinHeap: Sendable where Element: Sendable {}
