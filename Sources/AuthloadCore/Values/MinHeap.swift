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
    /// Every element, in no set order.
    @inlinable public var elements: [Element] { items }

    @inlinable
    public mutating func push(_ element: Element) {
        items.append(element)
        items.withUnsafeMutableBufferPointer { Self.siftUp($0, from: $0.count - 1) }
    }

    /// Removes and returns the smallest element, if any.
    @inlinable
    @discardableResult
    public mutating func pop() -> Element? {
        guard let last = items.popLast() else { return nil }
        guard !items.isEmpty else { return last }
        return items.withUnsafeMutableBufferPointer { Self.replaceTop($0, with: last) }
    }

    // Sifting moves elements into a hole rather than swapping them, through the storage's pointer: copying an element
    // out of the array to compare or swap it retained and released every reference it holds, at every level (the
    // simulation clock's heap holds a sleeper or a timer in each entry, and this was most of its cost).

    @inlinable
    static func siftUp(_ heap: UnsafeMutableBufferPointer<Element>, from start: Int) {
        let base = heap.baseAddress!
        var child = start
        guard child > 0, base[child] < base[(child - 1) / 2] else { return }
        let moving = (base + child).move()
        repeat {
            let parent = (child - 1) / 2
            guard moving < base[parent] else { break }
            (base + child).moveInitialize(from: base + parent, count: 1)
            child = parent
        } while child > 0
        (base + child).initialize(to: moving)
    }

    /// Puts `element` in place of the top and sifts it down; returns the old top.
    @inlinable
    static func replaceTop(_ heap: UnsafeMutableBufferPointer<Element>, with element: Element) -> Element {
        let base = heap.baseAddress!
        let count = heap.count
        let smallest = base.move()
        var hole = 0
        while true {
            let left = 2 * hole + 1
            guard left < count else { break }
            let right = left + 1
            let child = right < count && base[right] < base[left] ? right : left
            guard base[child] < element else { break }
            (base + hole).moveInitialize(from: base + child, count: 1)
            hole = child
        }
        (base + hole).initialize(to: element)
        return smallest
    }
}

extension MinHeap: Sendable where Element: Sendable {}
