/// A stack of plain values for the parser (its open containers and keys), in memory of its own that it writes and
/// reads in place: an array held by the parser checked its storage's uniqueness at every key and bracket, a call each.
///
/// Its owner keeps the count and reads only below it; ``grow(past:)`` keeps what is there.
final class JSONStack<Element: BitwiseCopyable> {
    private(set) var base: UnsafeMutablePointer<Element>
    private(set) var capacity: Int

    init(capacity: Int) {
        self.capacity = max(capacity, 1)
        base = .allocate(capacity: self.capacity)
    }

    deinit { base.deallocate() }

    /// Writes `element` at `index`, which may be at most one past the last written, making room as needed.
    @inline(__always)
    func write(_ element: Element, at index: Int) {
        if index >= capacity { grow(past: index) }
        base[index] = element
    }

    /// The element at `index`, which must have been written.
    @inline(__always)
    subscript(index: Int) -> Element { base[index] }

    @inline(never)
    private func grow(past index: Int) {
        precondition(index >= 0 && index <= capacity, "JSONStack written past its end")
        let larger = UnsafeMutablePointer<Element>.allocate(capacity: capacity * 2)
        larger.initialize(from: base, count: capacity)
        base.deallocate()
        base = larger
        capacity *= 2
    }
}
