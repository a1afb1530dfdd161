import Testing

@testable import AuthloadCore

@Suite("Known strings handed out by the JSON reader")
struct JSONKnownStringsTests {
    private static let long = "application/json; okta-version=1.0.0"
    private static let twin = "application/json; okta-version=1.0.1"
    private static let known = JSONKnownStrings([long, "$.authenticators.value[0]", "short", long])

    /// The strings of a JSON array, each read with and without the known strings.
    private func read(_ text: String) throws -> [(plain: String?, known: String?)] {
        var plain: [String?] = []
        var known: [String?] = []
        try JSONReader.read(Array(text.utf8)) { reader throws(JSONParseError) in
            try reader.readElements { reader throws(JSONParseError) in
                let start = reader.offset
                plain.append(try reader.string())
                var again = JSONReader(parser: JSONParser(bytes: reader.parser.bytes))
                defer { again.parser.release() }
                again.parser.position = start
                known.append(try again.string(known: Self.known))
            }
        }
        return Array(zip(plain, known))
    }

    private func storage(_ string: String) -> UnsafePointer<UInt8>? {
        string.utf8.withContiguousStorageIfAvailable { $0.baseAddress } ?? nil
    }

    @Test("a string equal to a known one is that one, escaped or not; any other reads as it always did")
    func matches() throws {
        let text =
            #"["\#(Self.long)", "application\/json; okta-version=1.0.0", "\#(Self.twin)", "application/json; okta-version=1.0.", "#
            + #""$.authenticators.value[0]", "$.authenticators.value[1]", "short", "é\u00e9 application/json; okta", 5, null]"#
        let strings = try read(text)
        #expect(strings.count == 10)
        for (plain, known) in strings { #expect(plain == known) }
        #expect(strings[0].known == Self.long)
        #expect(storage(try #require(strings[0].known)) == storage(Self.long))
        #expect(storage(try #require(strings[1].known)) == storage(Self.long))
        #expect(storage(try #require(strings[2].known)) != storage(Self.long))
        #expect(strings[8].known == nil && strings[9].known == nil)
    }

    @Test("agrees with plain reading on random strings near the known ones")
    func randomStrings() throws {
        var random = SplitMix64(seed: 7)
        let pieces = [
            "application/json", "; okta-version=1.0.", "0", "1", "$.authenticators.value[", "]", "\\/", "\\u0030", "é", "x",
            Self.long, #"application\/json; okta-version=1.0.\u0030"#, "$.authenticators.value[0]"
        ]
        var matched = 0
        for _ in 0..<300 {
            let elements = (0..<8).map { _ in
                "\""
                    + (0..<Int.random(in: 1...3, using: &random)).map { _ in pieces[Int.random(in: 0..<pieces.count, using: &random)] }
                    .joined() + "\""
            }
            for (plain, known) in try read("[" + elements.joined(separator: ",") + "]") {
                #expect(plain == known)
                if let known, storage(known) == storage(Self.long) || known == "$.authenticators.value[0]" { matched += 1 }
            }
        }
        #expect(matched > 100)
    }
}
