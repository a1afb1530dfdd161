import AuthloadCore
import Synchronization
import Testing

@Suite("Min-heap")
struct MinHeapTests {
    /// An element holding a reference, as the clocks' entries do, that counts its instances: sifting moves elements
    /// through raw memory, which must neither lose nor duplicate one.
    final class Token: Sendable {
        static let alive = Atomic<Int>(0)
        init() { Self.alive.add(1, ordering: .relaxed) }
        deinit { Self.alive.subtract(1, ordering: .relaxed) }
    }

    struct Entry: Comparable {
        var key: Int
        var sequence: Int
        var token = Token()

        static func < (a: Entry, b: Entry) -> Bool { (a.key, a.sequence) < (b.key, b.sequence) }
        static func == (a: Entry, b: Entry) -> Bool { (a.key, a.sequence) == (b.key, b.sequence) }
    }

    @Test("pops in order under random pushes and pops, and keeps every element it holds exactly once")
    func ordersAndKeepsElements() {
        var random = SplitMix64(seed: 5)
        do {
            var heap = MinHeap<Entry>()
            var reference: [(Int, Int)] = []
            for step in 0..<3_000 {
                if random.next() % 3 != 0 || heap.isEmpty {
                    let key = Int(random.next() % 200)
                    heap.push(Entry(key: key, sequence: step))
                    reference.append((key, step))
                } else {
                    let popped = heap.pop()
                    let smallest = reference.indices.min { reference[$0] < reference[$1] }!
                    #expect(popped.map { ($0.key, $0.sequence) } ?? (-1, -1) == reference.remove(at: smallest))
                }
                #expect(heap.count == reference.count)
            }
            #expect(Token.alive.load(ordering: .relaxed) == reference.count)
            var last = (Int.min, Int.min)
            while let entry = heap.pop() {
                #expect((entry.key, entry.sequence) > last)
                last = (entry.key, entry.sequence)
            }
            #expect(heap.pop() == nil)
        }
        #expect(Token.alive.load(ordering: .relaxed) == 0)
    }
}
