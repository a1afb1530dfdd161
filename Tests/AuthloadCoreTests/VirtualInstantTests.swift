import Testing

@testable import AuthloadCore

@Suite("A virtual instant: its order, its arithmetic, and its two words")
struct VirtualInstantTests {
    /// Offsets on both sides of zero and across the low word's carry (2^64 attoseconds is about 18.4 s).
    static let offsets: [Duration] = [
        .zero, .nanoseconds(1), .seconds(18), .seconds(19), .seconds(86_400 * 365), .seconds(-1), .seconds(-19),
        .nanoseconds(-1), Duration(attoseconds: Int128(UInt64.max)), Duration(attoseconds: Int128(UInt64.max) + 1)
    ]

    @Test("instants order, compare and subtract exactly as their offsets do")
    func orderAndDistance() {
        for a in Self.offsets {
            for b in Self.offsets {
                let (x, y) = (VirtualInstant(offset: a), VirtualInstant(offset: b))
                #expect((x < y) == (a < b), "\(a) < \(b)")
                #expect((x == y) == (a == b), "\(a) == \(b)")
                #expect(x.duration(to: y) == b - a)
                #expect(x.advanced(by: b).offset == a + b)
            }
        }
    }

    @Test("the offset is kept in two 8-byte words: an Int128 field made it 16-byte aligned, and release builds crashed")
    func eightByteAligned() {
        // f23ebea stored the offset as an Int128: `authload simulate Profiles/capacity.json` then jumped to address 0
        // from a task's job in every release run (docs/development.md, "An instant of two words").
        #expect(MemoryLayout<VirtualInstant>.alignment == MemoryLayout<Duration>.alignment)
        #expect(MemoryLayout<VirtualInstant>.alignment == 8)
        var instant = VirtualInstant(offset: .seconds(-19))
        instant.offset = .seconds(20)
        #expect(instant.offset == .seconds(20) && instant.description == "t+20s")
    }
}
