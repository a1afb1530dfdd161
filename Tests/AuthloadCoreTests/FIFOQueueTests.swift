import Testing

@testable import AuthloadCore

@Suite("FIFOQueue")
struct FIFOQueueTests {
    @Test("elements come out in the order they went in, across the front being dropped and the queue emptying")
    func order() {
        var queue = FIFOQueue<Int>()
        var expected: [Int] = []
        var taken: [Int] = []
        var next = 0
        // Bursts of appends and fewer pops: the consumed front passes 64 and is dropped several times.
        for round in 0..<50 {
            for _ in 0..<(round % 7 + 3) {
                queue.append(next)
                expected.append(next)
                next += 1
            }
            for _ in 0..<(round % 5 + 1) { if let value = queue.popFirst() { taken.append(value) } }
            #expect(queue.count == expected.count - taken.count)
            #expect(Array(queue) == Array(expected[taken.count...]), "iteration sees what is left, oldest first")
        }
        while let value = queue.popFirst() { taken.append(value) }
        #expect(taken == expected)
        #expect(queue.isEmpty && queue.count == 0 && queue.popFirst() == nil)
    }

    @Test("removeAll(where:) keeps the others in order, and the queue goes on from there")
    func removeWhere() {
        var queue = FIFOQueue<Int>()
        for value in 0..<10 { queue.append(value) }
        _ = queue.popFirst()
        queue.removeAll { $0 % 3 == 0 }
        #expect(Array(queue) == [1, 2, 4, 5, 7, 8])
        queue.append(10)
        #expect(queue.popFirst() == 1 && queue.count == 6)
        queue.removeAll { _ in true }
        #expect(queue.isEmpty && Array(queue).isEmpty)
    }

    @Test("a queue that empties lets large storage go, and keeps it when asked to")
    func storageWhenEmptied() {
        var small = FIFOQueue<Int>()
        var hot = FIFOQueue<Int>(keptCapacity: .max)
        for value in 0..<1_000 {
            small.append(value)
            hot.append(value)
        }
        while small.popFirst() != nil {}
        while hot.popFirst() != nil {}
        #expect(small.items.capacity == 0, "a held connection's empty queue costs nothing")
        #expect(hot.items.capacity >= 1_000, "a driver's queue keeps its storage for the next burst")
        for value in 0..<4 { small.append(value) }
        while small.popFirst() != nil {}
        #expect(small.items.capacity > 0 && small.items.capacity <= 16, "small storage is kept")
    }
}
