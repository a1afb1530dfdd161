import AuthloadCore
import Testing

@testable import AuthloadStaging

@Suite("Random hex digits of the staging services")
struct RandomHexTests {
    @Test("hex(n) writes the digits String(_:radix:) writes, draw by draw, and consumes the same draws")
    func sameDigitsAsRadixText() {
        for seed in [0, 1, 7, 13, 0xFFFF_FFFF_FFFF_FFFF] as [UInt64] {
            var random = SplitMix64(seed: seed)
            var reference = SplitMix64(seed: seed)
            for count in [0, 1, 15, 16, 17, 20, 24, 40, 43, 48, 64, 100] {
                var text = ""
                while text.count < count { text += String(reference.next(), radix: 16) }
                #expect(random.hex(count) == String(text.prefix(count)), "seed \(seed), \(count) digits")
                #expect(random.next() == reference.next(), "the same draws taken")
            }
        }
    }
}
