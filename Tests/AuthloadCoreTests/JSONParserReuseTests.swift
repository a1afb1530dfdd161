import AuthloadCore
import Testing

/// A parse takes its container and key stacks from the one before it: nothing of an earlier parse, finished or failed,
/// may show through in a later one.
@Suite("JSON parses that reuse an earlier parse's stacks")
struct JSONParserReuseTests {
    /// Documents that fail with keys and containers open, so their stacks go back holding them.
    static let failures: [String] = [
        #"{"a":{"b":{"c":"#,
        #"{"x":1,"y":{"x":2,"x":3}}"#,
        #"{"\u0061":{"b":[{"c":1,"#,
        #"[[[[[[[[[[[[[[[[[[[[{"k":"#,
        String(repeating: #"[{"a":"#, count: 1_000)
    ]

    @Test("a parse after a failed one finds no key and no container of it", arguments: failures)
    func parseAfterFailure(failing: String) throws {
        #expect(throws: JSONParseError.self) { try JSONValue.parse(failing) }
        // The keys the failed parse left open are new here, each once per object.
        let text = #"{"b":1,"c":{"b":2,"x":[{"a":1},{"a":2}]},"a":{}}"#
        #expect(try JSONValue.parse(text).serializedString == text)
        #expect(try JSONValue.parse(#"[1,[2]]"#).serializedString == #"[1,[2]]"#)
        // A repeated key is still one, where it is.
        let error = try #require(throws: JSONParseError.self) { try JSONValue.parse(#"{"c":1,"c":2}"#) }
        #expect(error.message == #"duplicate key "c""#)
        #expect(error.column == 8)
    }

    @Test("a reader after one whose body threw reads from the start of its own document")
    func readerAfterThrowingBody() throws {
        let stop = JSONParseError(line: 1, column: 1, byteOffset: 0, message: "stop")
        let thrown = try #require(throws: JSONParseError.self) {
            try JSONReader.read(Array(#"{"a":{"b":{"c":1}}}"#.utf8)) { reader throws(JSONParseError) in
                try reader.readMembers { reader, _ throws(JSONParseError) in
                    try reader.readMembers { _, _ throws(JSONParseError) in throw stop }
                }
            }
        }
        #expect(thrown == stop)
        var value: String?
        try JSONReader.read(Array(#"{"b":"x","a":"y"}"#.utf8)) { reader throws(JSONParseError) in
            try reader.readMembers { reader, key throws(JSONParseError) in
                if key == "a" { value = try reader.string() }
            }
        }
        #expect(value == "y")
        let error = try #require(throws: JSONParseError.self) {
            try JSONReader.read(Array(#"{"a":1,"a":2}"#.utf8)) { reader throws(JSONParseError) in try reader.skip() }
        }
        #expect(error.message == #"duplicate key "a""#)
    }

    @Test("a parse inside a reader's body has stacks of its own")
    func parseInsideReader() throws {
        var inner: JSONValue?
        var after: Int?
        try JSONReader.read(Array(#"{"a":{"k":1},"b":2}"#.utf8)) { reader throws(JSONParseError) in
            try reader.readMembers { reader, key throws(JSONParseError) in
                if key == "a" {
                    // While the reader's object is open: the inner parse has keys of its own, and leaves the reader's.
                    inner = try JSONValue.parse(#"{"a":[{"a":1}],"b":null}"#)
                    #expect(throws: JSONParseError.self) { try JSONValue.parse(#"{"k":{"k":"#) }
                    try reader.skip()
                }
                if key == "b" { after = try reader.int() }
            }
        }
        #expect(inner?.serializedString == #"{"a":[{"a":1}],"b":null}"#)
        #expect(after == 2)
    }

    @Test("a document whose nesting outgrew the kept stacks parses, and so does the next")
    func deepThenShallow() throws {
        let depth = JSONValue.maximumNestingDepth
        let objects = String(repeating: #"{"a":"#, count: depth) + "1" + String(repeating: "}", count: depth)
        #expect(try JSONValue.parse(objects).serializedString == objects)
        #expect(try JSONValue.parse(#"{"a":{"a":1}}"#).serializedString == #"{"a":{"a":1}}"#)
    }
}
