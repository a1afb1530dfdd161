import Testing

@testable import AuthloadCore

/// The parser's shortcuts (a short key read from one word, repeated keys found through a word of key bits, literals
/// compared as a word, the reader's typed reads checking a value's first byte) against what they stand in for: each
/// input read whole and through the reader, at every length up to the end of its buffer, agreeing on the value or on
/// the error and its offset.
@Suite("JSON parser shortcuts")
struct JSONFastPathTests {
    /// Reads `bytes` through the reader, skipping every value, and into a tree; both must agree.
    private func outcome(_ bytes: [UInt8]) -> Result<JSONValue, JSONParseError> {
        let parsed = Result { () throws(JSONParseError) -> JSONValue in try JSONValue.parse(bytes) }
        let skipped = Result { () throws(JSONParseError) in
            try JSONReader.read(bytes) { reader throws(JSONParseError) in try reader.skip() }
        }
        switch (parsed, skipped) {
        case (.success, .success): break
        case (.failure(let parsed), .failure(let skipped)): #expect(parsed == skipped, "\(String(decoding: bytes, as: UTF8.self))")
        default: Issue.record("parse and skip disagree on \(String(decoding: bytes, as: UTF8.self)): \(parsed), \(skipped)")
        }
        return parsed
    }

    @Test("a short plain key reads whole at any distance from the end of its buffer")
    func shortKeys() throws {
        for length in 0..<10 {
            let key = String("abcdefghij".prefix(length))
            for spaces in 0..<9 {
                let text = "{\"\(key)\"" + String(repeating: " ", count: spaces) + ":1}"
                #expect(try outcome(Array(text.utf8)).get() == .object(JSONObject([(key, 1)])))
            }
        }
    }

    @Test(
        "a key whose first word holds an escape, a control character, non-ASCII text or invalid UTF-8 reads as before",
        arguments: 0..<8)
    func specialBytesInKeys(at index: Int) throws {
        let plain = Array("abcdefgh".utf8)
        for (special, decoded): ([UInt8], String?) in [
            (Array(#"\n"#.utf8), "\n"), (Array(#"\u0041"#.utf8), "A"), (Array("é".utf8), "é"), (Array("😀".utf8), "😀"),
            ([0x01], nil), ([0x1F], nil), ([0xFF], nil), ([0xC3], nil), (Array(#"\x"#.utf8), nil)
        ] {
            var key = plain
            key.replaceSubrange(index..<index + 1, with: special)
            let bytes = Array(#"{""#.utf8) + key + Array(#"":1}"#.utf8)
            let result = outcome(bytes)
            if let decoded {
                var expected = "abcdefgh"
                let at = expected.index(expected.startIndex, offsetBy: index)
                expected.replaceSubrange(at...at, with: decoded)
                #expect(try result.get() == .object(JSONObject([(expected, 1)])))
            } else {
                let error = try #require(throws: JSONParseError.self) { try result.get() }
                // The error names the offending byte, past the opening brace and quote.
                #expect(error.byteOffset == 2 + index + (special.first == 0x5C ? 1 : 0), "\(error)")
            }
        }
    }

    @Test("a key cut off by the end of input, at any length, is unterminated")
    func unterminatedKeys() throws {
        for length in 0..<12 {
            let bytes = Array(("{\"" + String("abcdefghijkl".prefix(length))).utf8)
            let error = try #require(throws: JSONParseError.self) { try outcome(bytes).get() }
            #expect(error.message == #"unterminated string: no closing '"' before end of input"#)
            #expect(error.byteOffset == 1)
        }
    }

    @Test("the first repeated key is found among keys that share a bit, a length or their first eight bytes")
    func repeatedKeys() throws {
        // More keys than the word has bits, so that bits collide, with pairs alike in their first eight bytes.
        let keys = (0..<150).map { "key\($0)" } + (0..<20).map { "abcdefgh\($0)" } + ["abcdefgh", "", "é", "a\"b"]
        for repeated in [0, 1, 11, 12, 13, 63, 64, 100, 149, 150, 169, 170, 171, 172, 173] {
            for position in [repeated + 1, keys.count] {
                var members = keys.enumerated().map { (JSONValue.string($0.element).serializedString, $0.offset) }
                members.insert((JSONValue.string(keys[repeated]).serializedString, -1), at: position)
                let prefix = "{" + members[..<position].map { "\($0.0):\($0.1)," }.joined()
                let text = prefix + members[position...].map { "\($0.0):\($0.1)" }.joined(separator: ",") + "}"
                let error = try #require(throws: JSONParseError.self) { try outcome(Array(text.utf8)).get() }
                #expect(error.message == "duplicate key \(JSONValue.string(keys[repeated]).serializedString)")
                #expect(error.byteOffset == prefix.utf8.count)
            }
        }
        // The same keys once each read whole, in a nested object past the key stack's first allocation.
        let object =
            "{" + keys.enumerated().map { "\(JSONValue.string($0.element).serializedString):\($0.offset)" }.joined(separator: ",") + "}"
        let nested = #"{"a":{"b":"# + object + ",\"c\":" + object + "}}"
        let value = try outcome(Array(nested.utf8)).get()
        #expect(value["a"]?["c"]?.objectValue?.count == keys.count)
        #expect(value["a"]?["b"]?[keys[160]] == 160)
    }

    @Test("a repeated key spelled with an escape is found in an object that outgrew the linear search")
    func repeatedEscapedKeyInSet() throws {
        let members = (0..<30).map { #""k\#($0)":\#($0)"# }.joined(separator: ",")
        let prefix = "{" + members + ","
        let error = try #require(throws: JSONParseError.self) { try outcome(Array((prefix + #""k\u0032\u0039":0}"#).utf8)).get() }
        #expect(error.message == #"duplicate key "k29""#)
        #expect(error.byteOffset == prefix.utf8.count)
    }

    @Test(
        "literals read as a word are rejected, cut off or misspelled, at their first byte",
        arguments: ["t", "tr", "tru", "trUe", "truE", "f", "fals", "falsE", "fAlse", "n", "nul", "nulL", "nill", "tx"])
    func literals(_ literal: String) throws {
        for (prefix, suffix) in [("", ""), ("[", "]"), (#"{"a":"#, "}"), ("[", "")] {
            let text = prefix + literal + suffix
            let error = try #require(throws: JSONParseError.self) { try outcome(Array(text.utf8)).get() }
            #expect(error.byteOffset == prefix.utf8.count, "\(text): \(error)")
            #expect(error.message.hasPrefix("expected a JSON value, found "), "\(text): \(error)")
        }
    }

    @Test("literals and numbers at the very end of the input, and followed by more, read whole")
    func literalsAtEnd() throws {
        for (text, value): (String, JSONValue) in [
            ("true", true), ("false", false), ("null", .null), (" [true,false,null] ", [true, false, .null]), ("0", 0),
            ("-7", -7), ("12.5e+3", 12_500), ("[1,-0.25]", [1, -0.25]), (#"{"a":1e2}"#, ["a": 100])
        ] {
            #expect(try outcome(Array(text.utf8)).get() == value)
        }
    }

    @Test("the reader's typed reads take a value of another type as absent and fail where parsing fails")
    func typedReads() throws {
        let documents = [
            #"["s", "\u00e9\n", true, false, null, 1.5, {"a": 1}, [2]]"#, #"[tru]"#, #"[fals]"#, #"["x]"#, #"[{"a" 1}]"#,
            #"[[1,]]"#, #"[-]"#, #"[nul]"#, #"[+1]"#
        ]
        for document in documents {
            let bytes = Array(document.utf8)
            let parsed = Result { () throws(JSONParseError) -> JSONValue in try JSONValue.parse(bytes) }
            var read: [String] = []
            for kind in 0..<6 {
                let result = Result { () throws(JSONParseError) -> [String] in
                    var values: [String] = []
                    try JSONReader.read(bytes) { reader throws(JSONParseError) in
                        try reader.readElements { reader throws(JSONParseError) in
                            switch kind {
                            case 0: values.append(String(describing: try reader.string()))
                            case 1: values.append(String(describing: try reader.bool()))
                            case 2: values.append(String(describing: try reader.number()))
                            case 3: values.append(String(describing: try reader.readMembers { _, _ throws(JSONParseError) in }))
                            case 4: values.append(String(describing: try reader.readElements { _ throws(JSONParseError) in }))
                            default: values.append(try reader.value().serializedString)
                            }
                        }
                    }
                    return values
                }
                switch (parsed, result) {
                case (.success, .success(let values)): read += values
                case (.failure(let parsed), .failure(let error)): #expect(parsed == error, "\(document), read \(kind)")
                default: Issue.record("\(document), read \(kind): parse \(parsed), read \(result)")
                }
            }
            if case .success = parsed {
                #expect(
                    read == [
                        "Optional(\"s\")", "Optional(\"é\\n\")", "nil", "nil", "nil", "nil", "nil", "nil",
                        "nil", "nil", "Optional(true)", "Optional(false)", "nil", "nil", "nil", "nil",
                        "nil", "nil", "nil", "nil", "nil", "Optional(1.5)", "nil", "nil",
                        "false", "false", "false", "false", "false", "false", "true", "false",
                        "false", "false", "false", "false", "false", "false", "false", "true",
                        #""s""#, #""é\n""#, "true", "false", "null", "1.5", #"{"a":1}"#, "[2]"
                    ])
            }
        }
    }

    @Test("keys compare with literals by length, first word and the rest, escaped or not")
    func keyLiterals() throws {
        let text = #"{"ka": 0, "k\u0061": 1, "abcdefg": 2, "abcdefgh": 3, "abcdefghX": 4, "abcdefghY": 5, "abcdefghijklmnopX": 6, "": 7}"#
        var matched: [Int: String] = [:]
        let error = try #require(throws: JSONParseError.self) {
            try JSONReader.read(Array(text.utf8)) { reader throws(JSONParseError) in
                try reader.readMembers { reader, key throws(JSONParseError) in
                    matched[try reader.int() ?? -1] = key == "ka" ? "ka" : "other"
                }
            }
        }
        // "ka" and "k\u0061" are the same key: the second is an error before its member is read.
        #expect(error.message == #"duplicate key "ka""#)
        #expect(matched == [0: "ka"])
        let distinct = #"{"k\u0061": 1, "abcdefg": 2, "abcdefgh": 3, "abcdefghX": 4, "abcdefghY": 5, "abcdefghijklmnopX": 6, "": 7}"#
        try JSONReader.read(Array(distinct.utf8)) { reader throws(JSONParseError) in
            try reader.readMembers { reader, key throws(JSONParseError) in
                let value = try reader.int() ?? -1
                switch key {
                case "ka": matched[value] = "ka"
                case "abcdefg": matched[value] = "abcdefg"
                case "abcdefgh": matched[value] = "abcdefgh"
                case "abcdefghY": matched[value] = "abcdefghY"
                case "abcdefghijklmnopY": matched[value] = "abcdefghijklmnopY"
                case "abcdefghijklmnopX": matched[value] = "abcdefghijklmnopX"
                case "": matched[value] = "(empty)"
                default: matched[value] = "other"
                }
            }
        }
        #expect(
            matched == [0: "ka", 1: "ka", 2: "abcdefg", 3: "abcdefgh", 4: "other", 5: "abcdefghY", 6: "abcdefghijklmnopX", 7: "(empty)"])
    }

    @Test("nesting past the container stack's first allocation reads and fails as before")
    func deepNesting() throws {
        for depth in [15, 16, 17, 40, 64, 65, 200] {
            let text = String(repeating: #"{"a":["#, count: depth) + "1" + String(repeating: "]}", count: depth)
            let value = try outcome(Array(text.utf8)).get()
            #expect(value.serializedString == text)
            let broken = String(repeating: #"{"a":["#, count: depth) + "1" + String(repeating: "]}", count: depth - 1) + "]]"
            let error = try #require(throws: JSONParseError.self) { try outcome(Array(broken.utf8)).get() }
            #expect(error.byteOffset == broken.utf8.count - 1)
        }
    }
}
