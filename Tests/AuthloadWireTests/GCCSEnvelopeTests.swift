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

    @Test("a body read as the service writes it gives what parsing it whole gives, and anything else is parsed whole")
    func readingAgrees() {
        var random = SplitMix64(seed: 38)
        let messages = ["success", "", "no authentication in progress", "a\"b", "tab\there", "é", "x\\y"]
        let data: [JSONValue] = [
            .null, .string("5f3c"), .object(["channelKey": "k", "blockKey": "b"]), .number(1.5), .array([1, "2"]), .bool(false)
        ]
        let edits: [String] = [" ", "0", "-", "1", "}", "\"", "\\", "\u{1}", "é", ".5", "e3", "0000000000000000"]
        var readWritten = 0
        for round in 0..<3_000 {
            let code = [0, 7, 5019, 2_000_000_000, 999_999_999_999_999, 1_000_000_000_000_000, -3][round % 7]
            let envelope = GCCSEnvelope(rtCode: code, rtMsg: messages[round % messages.count], data: data[round % data.count])
            var body = envelope.serialized()
            if round % 3 != 0 {
                // Edited somewhere: inserted, replaced or cut, often where the layout is read.
                let at = Int(random.next() % UInt64(body.count + 1))
                let edit = Array(edits[Int(random.next() % UInt64(edits.count))].utf8)
                switch random.next() % 3 {
                case 0: body.insert(contentsOf: edit, at: at)
                case 1: body.replaceSubrange(at..<min(body.count, at + 1), with: edit)
                default: body.removeSubrange(at..<body.count)
                }
            }
            let read = GCCSEnvelope(body: body)
            #expect(read == GCCSEnvelope(parsing: body), "\(String(decoding: body, as: UTF8.self))")
            if GCCSEnvelope.readWritten(body) != nil { readWritten += 1 }
        }
        #expect(readWritten > 400, "many bodies are read as written")
        #expect(GCCSEnvelope(body: Array(#"{"rtCode":0,"rtMsg":"success","data":{"channelKey":"k"}}"#.utf8))?.data["channelKey"] == "k")
    }
}
