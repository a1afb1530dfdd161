import AuthloadCore
import Testing

@Suite("JSON object writer")
struct JSONObjectWriterTests {
    @Test("writes what serializing the same object writes, for random members of every kind")
    func matchesSerialization() throws {
        var random = SplitMix64(seed: 7)
        // Keys and strings with quotes, backslashes, control characters and non-ASCII, besides plain ones.
        let pieces = ["a", "iss", "\"", "\\", "\u{1}", "\n", "ü", "日本", "", "session_exp", "/"]
        func text() -> String { (0..<Int(random.next() % 4)).map { _ in pieces[Int(random.next() % UInt64(pieces.count))] }.joined() }
        func value() -> JSONValue {
            switch random.next() % 6 {
            case 0: .null
            case 1: .bool(random.next() % 2 == 0)
            case 2: .number(Double(Int64(bitPattern: random.next()) % 1_000_000) / 1000)
            case 3: .array([.string(text()), .number(1)])
            case 4: .object(JSONObject([("k", .string(text()))]))
            default: .string(text())
            }
        }
        for _ in 0..<500 {
            var members: [(String, JSONValue)] = []
            var writer = JSONObjectWriter(reservingCapacity: 16)
            // Distinct keys: an object holds each once.
            for index in 0..<Int(random.next() % 5) {
                let key = text() + "#\(index)"
                let member = value()
                members.append((key, member))
                writer.add(key, member)
            }
            let bytes = writer.finish()
            let object = JSONValue.object(JSONObject(members))
            #expect(bytes == object.serialized(), "\(String(decoding: bytes, as: UTF8.self))")
            #expect(try JSONValue.parse(bytes) == object)
        }
    }

    @Test("no member gives {}, and a string member is the same as its JSON string")
    func emptyAndStrings() {
        #expect(JSONObjectWriter(reservingCapacity: 0).finish() == Array("{}".utf8))
        var writer = JSONObjectWriter(reservingCapacity: 0)
        writer.add("name", "a\"b")
        #expect(writer.finish() == Array(#"{"name":"a\"b"}"#.utf8))
    }
}
