import AuthloadCore
import Testing

/// Random documents, written together with the value they hold and the offset of their first repeated key, so that
/// parsing is checked against what was written rather than against itself; and random corruptions of them, read
/// value by value and parsed into a tree, which must agree byte for byte on what is wrong.
@Suite("JSON random documents")
struct JSONRandomDocumentTests {
    /// Keys that share their length and first, middle and last bytes, or their first eight bytes, or that are the
    /// same key spelled with and without escapes: the cases a shortcut in the search for a repeated key would miss.
    private static let keys: [(written: String, decoded: String)] = [
        ("a", "a"), ("b", "b"), ("", ""), ("name", "name"), ("aXbYc", "aXbYc"), ("aZbWc", "aZbWc"), ("aXbYcd", "aXbYcd"),
        ("abcdefgh", "abcdefgh"), ("abcdefgi", "abcdefgi"), ("abcdefghijklmnop", "abcdefghijklmnop"),
        ("abcdefghijklmnoq", "abcdefghijklmnoq"), ("bbcdefghijklmnop", "bbcdefghijklmnop"), ("ka", "ka"),
        (#"k\u0061"#, "ka"), ("é", "é"), (#"\u00e9"#, "é"), (#"x\ny"#, "x\ny"), ("1234567", "1234567"),
        ("123456789", "123456789")
    ]

    /// Writes random JSON, noting the byte offset of the first key that repeats one of its object's.
    private struct Writer {
        var random: SplitMix64
        var text: [UInt8] = []
        var firstRepeat: Int?

        mutating func value(depth: Int) -> JSONValue {
            switch Int.random(in: 0..<(depth < 4 ? 10 : 6), using: &random) {
            case 0:
                let (written, number) = [("0", 0), ("-1", -1), ("12.5", 12.5), ("1E22", 1e22), ("-3e-5", -3e-5), ("0.1", 0.1)][
                    Int.random(in: 0..<6, using: &random)]
                write(written)
                return .number(number)
            case 1:
                let (written, value): (String, JSONValue) = [("true", true), ("false", false), ("null", .null)][
                    Int.random(in: 0..<3, using: &random)]
                write(written)
                return value
            case 2...5:
                return .string(string())
            case 6, 7:
                return object(depth: depth)
            default:
                write("[")
                var elements: [JSONValue] = []
                for index in 0..<Int.random(in: 0...5, using: &random) {
                    if index > 0 { write(",") }
                    elements.append(value(depth: depth + 1))
                }
                write("]")
                return .array(elements)
            }
        }

        mutating func object(depth: Int) -> JSONValue {
            write("{")
            var object = JSONObject()
            var seen: Set<String> = []
            for index in 0..<Int.random(in: 0...16, using: &random) {
                if index > 0 { write(Bool.random(using: &random) ? "," : ",\n ") }
                var key = JSONRandomDocumentTests.keys[Int.random(in: 0..<JSONRandomDocumentTests.keys.count, using: &random)]
                // Mostly keys not seen yet in this object, so that most documents parse.
                if seen.contains(key.decoded), Int.random(in: 0..<4, using: &random) > 0 { key = ("u\(index)", "u\(index)") }
                if !seen.insert(key.decoded).inserted, firstRepeat == nil { firstRepeat = text.count }
                write("\"\(key.written)\"" + (Bool.random(using: &random) ? ":" : " : "))
                object[key.decoded] = value(depth: depth + 1)
            }
            write("}")
            return .object(object)
        }

        /// A string of plain ASCII of any length around the eight bytes read at once, or with escapes or non-ASCII.
        mutating func string() -> String {
            let pieces: [(String, String)] = [
                ("a", "a"), ("Z9", "Z9"), (#"\n"#, "\n"), (#"\""#, "\""), (#"\\"#, "\\"), (#"\u00e9"#, "é"),
                (#"\ud83d\ude00"#, "😀"), ("é", "é"), ("漢", "漢"), ("😀", "😀"), ("/", "/")
            ]
            let plain = Bool.random(using: &random)
            var (written, decoded) = ("", "")
            for _ in 0..<Int.random(in: 0...(plain ? 20 : 6), using: &random) {
                let piece = plain ? pieces[Int.random(in: 0..<2, using: &random)] : pieces.randomElement(using: &random)!
                written += piece.0
                decoded += piece.1
            }
            write("\"\(written)\"")
            return decoded
        }

        mutating func write(_ string: String) { text += Array(string.utf8) }
    }

    /// Reads a document with ``JSONReader``: every member of the top object as a tree, or, skipping, anything else.
    private func read(_ bytes: [UInt8]) throws(JSONParseError) -> JSONValue? {
        var object: JSONObject?
        try JSONReader.read(bytes) { reader throws(JSONParseError) in
            var members = JSONObject()
            if try reader.readMembers(
                into: &members,
                { reader, key, members throws(JSONParseError) in
                    members[key.description] = try reader.value()
                })
            {
                object = members
            }
        }
        return object.map { .object($0) }
    }

    @Test("a random document parses to the value written, or fails at its first repeated key", arguments: 0..<8)
    func documents(seed: UInt64) throws {
        var writer = Writer(random: SplitMix64(seed: seed))
        for _ in 0..<200 {
            writer.text = []
            writer.firstRepeat = nil
            let written = writer.object(depth: 0)
            if let offset = writer.firstRepeat {
                let error = try #require(throws: JSONParseError.self) { try JSONValue.parse(writer.text) }
                #expect(error.byteOffset == offset && error.message.hasPrefix("duplicate key"))
                #expect(throws: error) { try read(writer.text) }
            } else {
                #expect(try JSONValue.parse(writer.text) == written)
                #expect(try read(writer.text) == written)
            }
        }
    }

    @Test("a random corruption is found by the reader at the byte and with the error parsing finds", arguments: 0..<8)
    func corruptions(seed: UInt64) throws {
        var writer = Writer(random: SplitMix64(seed: seed ^ 0xC0DE))
        var failures = 0
        for round in 0..<400 {
            writer.text = []
            _ = writer.object(depth: 0)
            var bytes = writer.text
            let index = Int.random(in: 0..<bytes.count, using: &writer.random)
            switch round % 3 {
            case 0: bytes.removeSubrange(index...)
            case 1: bytes[index] = Array(#"{}[]:,"\ 0aeu-."#.utf8 + [0x01, 0x80, 0xFF]).randomElement(using: &writer.random)!
            default: bytes.insert(UInt8.random(in: 0...255, using: &writer.random), at: index)
            }
            do {
                let value = try JSONValue.parse(bytes)
                #expect(try read(bytes) == value)
            } catch {
                failures += 1
                #expect(throws: error) { try read(bytes) }
            }
        }
        // Most corruptions break a document; some (a byte inside a string, a truncated number) do not.
        #expect(failures > 200)
    }
}
