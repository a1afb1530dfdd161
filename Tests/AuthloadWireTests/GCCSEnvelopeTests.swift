import AuthloadCore
import Testing

@testable import AuthloadWire

@Suite("GCCS REST envelopes")
struct GCCSEnvelopeTests {
    @Test("an envelope writes itself byte for byte as its JSON object serializes, and parses back to itself")
    func serializationAgrees() throws {
        var random = SplitMix64(seed: 35)
        let pieces = ["a", "Z", "0", " ", "é", "\"", "\\", "\n", "\u{1}", "/", "€", "\u{7F}"]
        func text() -> String { (0..<Int(random.next() % 10)).map { _ in pieces[Int(random.next() % UInt64(pieces.count))] }.joined() }
        func value(depth: Int) -> JSONValue {
            switch random.next() % (depth > 2 ? 4 : 6) {
            case 0: .null
            case 1: .bool(random.next() % 2 == 0)
            case 2: .number(Double(Int64(bitPattern: random.next()) % 100_000) / (random.next() % 2 == 0 ? 1 : 8))
            case 3: .string(text())
            case 4: .array((0..<Int(random.next() % 3)).map { _ in value(depth: depth + 1) })
            default: .object(JSONObject((0..<Int(random.next() % 4)).map { ("k\($0)" + text(), value(depth: depth + 1)) }))
            }
        }
        let codes = [0, 5019, -1, 2_000_000_000, Int(Int32.min)]
        for round in 0..<1_000 {
            let code = round < codes.count ? codes[round] : Int(Int64(bitPattern: random.next()) % 1_000_000)
            let envelope = GCCSEnvelope(rtCode: code, rtMsg: text(), data: value(depth: 0))
            let written = envelope.serialized()
            #expect(written == envelope.json.serialized(), "\(envelope)")
            #expect(GCCSEnvelope(body: written) == envelope)
        }
    }
}
