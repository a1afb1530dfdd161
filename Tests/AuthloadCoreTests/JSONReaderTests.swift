import AuthloadCore
import Testing

@Suite("JSON read value by value")
struct JSONReaderTests {
    /// Reads `name` and `tags` from a document, leaving every other member to be skipped.
    private func nameAndTags(_ text: String) throws(JSONParseError) -> (String?, [String]) {
        var name: String?
        var tags: [String] = []
        try JSONReader.read(Array(text.utf8)) { reader throws(JSONParseError) in
            try reader.readMembers { reader, key throws(JSONParseError) in
                switch key {
                case "name": name = try reader.string()
                case "tags":
                    try reader.readElements { reader throws(JSONParseError) in
                        if let tag = try reader.string() { tags.append(tag) }
                    }
                default: break
                }
            }
        }
        return (name, tags)
    }

    @Test("reads the members it asks for, skips the rest, and takes a value of another type as absent")
    func readsAndSkips() throws {
        let (name, tags) = try nameAndTags(
            #"{"skip": {"a": [1, 2.5e3, true, null, {"b": "\u00e9\n"}]}, "name": "n\u00e9", "tags": ["x", 3, "y"], "other": "z"}"#)
        #expect(name == "né")
        #expect(tags == ["x", "y"])
        #expect(try nameAndTags(#"{"name": 4, "tags": {"x": 1}}"#) == (nil, []))
        #expect(try nameAndTags(#"[1, 2]"#) == (nil, []))
    }

    @Test(
        "a skipped value is checked as parsing checks it, with the same error",
        arguments: [
            #"{"skip": [1, 2,], "name": "n"}"#, #"{"skip": {"a": 1, "a": 2}, "name": "n"}"#, #"{"skip": "\x", "name": "n"}"#,
            #"{"skip": 01, "name": "n"}"#, #"{"skip": [1 2]}"#, #"{"name": "n"} {}"#, #"{"name": "n", "name": "m"}"#,
            "{\"skip\": \"\u{1}\"}", #"{"skip": nul}"#, #"{"skip": {"a" 1}}"#
        ])
    func skippedValuesAreChecked(_ text: String) throws {
        let parseError = #expect(throws: JSONParseError.self) { try JSONValue.parse(text) }
        let readError = #expect(throws: JSONParseError.self) { try nameAndTags(text) }
        #expect(readError == parseError)
    }

    @Test("a repeated key is found in an object of any size")
    func repeatedKeyInLargeObject() {
        let members = (0..<40).map { #""k\#($0)": \#($0)"# }.joined(separator: ", ")
        let text = #"{"skip": {\#(members), "k7": 0}}"#
        let parseError = #expect(throws: JSONParseError.self) { try JSONValue.parse(text) }
        let readError = #expect(throws: JSONParseError.self) { try nameAndTags(text) }
        #expect(readError == parseError)
        #expect(readError?.message == #"duplicate key "k7""#)
    }

    @Test("a value read as it stands after its reader looked inside it")
    func valueSince() throws {
        var value: JSONValue?
        try JSONReader.read(Array(#"{"v": {"id": "a", "n": [1]}}"#.utf8)) { reader throws(JSONParseError) in
            try reader.readMembers { reader, _ throws(JSONParseError) in
                let start = reader.offset
                try reader.readMembers { _, _ in }
                value = try reader.value(since: start)
            }
        }
        #expect(value == ["id": "a", "n": [1]])
    }
}
