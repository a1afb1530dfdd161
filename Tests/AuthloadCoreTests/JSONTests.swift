import AuthloadCore
import Testing

@Suite("JSON parsing and serialization")
struct JSONTests {
    // MARK: Round trips

    @Test(
        "compact documents serialize back to the same text",
        arguments: [
            "null", "true", "false", "0", "-0", "-12", "0.5", "1e+300", "1.5e-07", "12345678901234",
            #""""#, #""é😀""#, #""\u0001\n\"\\""#, "[]", "{}", #"[1,[2,[3]],{"a":{}}]"#,
            #"{"z":1,"a":2,"m":[true,null]}"#, #"{"user":{"name":"1001","tags":["a","b"]}}"#
        ])
    func roundTrip(text: String) throws {
        #expect(try JSONValue.parse(text).serializedString == text)
    }

    @Test(
        "other spellings serialize to the compact form",
        arguments: [
            (" {\n\t\"a\" : [ 1 , 2.50 ] }\r\n", #"{"a":[1,2.5]}"#),
            ("1E2", "100"), ("-1.0", "-1"), (#""\/\u00e9""#, #""/é""#), ("\u{FEFF}[true]", "[true]")
        ])
    func normalizes(text: String, compact: String) throws {
        #expect(try JSONValue.parse(text).serializedString == compact)
    }

    @Test("values built from literals serialize in the order written")
    func literals() {
        let body: JSONValue = ["username": "1001", "n": 3, "ratio": 0.25, "ok": true, "none": nil, "list": [1, "two"]]
        #expect(body.serializedString == #"{"username":"1001","n":3,"ratio":0.25,"ok":true,"none":null,"list":[1,"two"]}"#)
    }

    @Test("every input form parses to the same value")
    func inputForms() throws {
        let text = #"{"a":[1,"é",{"b":null}]}"#
        let bytes = Array(text.utf8)
        let expected = try JSONValue.parse(text)
        #expect(try JSONValue.parse(bytes) == expected)
        #expect(try JSONValue.parse(bytes[...]) == expected)
        #expect(try JSONValue.parse(bytes.lazy.map { $0 }) == expected)
        #expect(try bytes.withUnsafeBytes { raw throws(JSONParseError) in try JSONValue.parse(raw) } == expected)
    }

    // MARK: Errors

    @Test(
        "each error names its line and column",
        arguments: [
            ("", 1, 1, "expected a JSON value, found end of input"),
            (" \n  ", 2, 3, "expected a JSON value, found end of input"),
            ("{\n  \"a\": 1,\n  \"load\": {\"u\":1x}\n}", 3, 17, "expected ',' or '}' after object member, found 'x'"),
            (#"{"a":1,}"#, 1, 8, "expected a string key after ',', found '}' (JSON allows no trailing comma)"),
            ("[1,2,\n]", 2, 1, "expected a JSON value after ',', found ']' (JSON allows no trailing comma)"),
            ("[1 2]", 1, 4, "expected ',' or ']' after array element, found '2'"),
            ("[true false]", 1, 7, "expected ',' or ']' after array element, found 'false'"),
            ("[1", 1, 3, "expected ',' or ']' after array element, found end of input"),
            ("[1,,2]", 1, 4, "expected a JSON value, found ','"),
            (#"{"a" 1}"#, 1, 6, "expected ':' after object key, found '1'"),
            (#"{"a":1,"b""#, 1, 11, "expected ':' after object key, found end of input"),
            (#"{"a":}"#, 1, 6, "expected a JSON value, found '}'"),
            (#"{"a":1"#, 1, 7, "expected ',' or '}' after object member, found end of input"),
            ("{a:1}", 1, 2, "expected a string key or '}', found 'a'"),
            ("{'a':1}", 1, 2, "expected a string key or '}', found a single quote (JSON strings use double quotes)"),
            (#"{"a":1,2}"#, 1, 8, "expected a string key after ',', found '2'"),
            ("[01]", 1, 2, "numbers must not start with a leading zero"),
            ("-", 1, 2, "expected a digit after '-', found end of input"),
            ("-Infinity", 1, 2, "expected a digit after '-', found 'Infinity'"),
            ("[1.]", 1, 4, "expected a digit after '.', found ']'"),
            ("1e", 1, 3, "expected a digit in the exponent, found end of input"),
            ("[.5]", 1, 2, "expected a JSON value, found '.'"),
            ("+1", 1, 1, "expected a JSON value, found '+'"),
            ("[NaN]", 1, 2, "expected a JSON value, found 'NaN'"),
            ("tru", 1, 1, "expected a JSON value, found 'tru'"),
            ("1e400", 1, 1, "number 1e400 is too large for a 64-bit floating-point value"),
            ("// note\n{}", 1, 1, "expected a JSON value, found '/'"),
            ("\u{0C}1", 1, 1, "expected a JSON value, found control character U+000C"),
            ("é", 1, 1, "expected a JSON value, found 'é' (U+00E9)"),
            ("{} x", 1, 4, "expected end of input after the JSON value, found 'x'"),
            ("{}{}", 1, 3, "expected end of input after the JSON value, found '{'"),
            ("[\"abc", 1, 2, "unterminated string: no closing '\"' before end of input"),
            (#""a\x""#, 1, 4, #"expected an escape character (one of "\/bfnrtu) after '\', found 'x'"#),
            (#""\u12G4""#, 1, 6, #"expected four hex digits after '\u', found 'G'"#),
            (#""\uD83D""#, 1, 2, #"unpaired surrogate \uD83D in string (a lone half of a UTF-16 pair is not a character)"#),
            (#""\uD83D\u0041""#, 1, 2, #"unpaired surrogate \uD83D in string (a lone half of a UTF-16 pair is not a character)"#),
            (#""x\uDE00""#, 1, 3, #"unpaired surrogate \uDE00 in string (a lone half of a UTF-16 pair is not a character)"#),
            ("[\"a\tb\"]", 1, 4, "unescaped control character U+0009 in string at byte offset 3"),
            ("\"0123456789abcdef\u{1}\"", 1, 18, "unescaped control character U+0001 in string at byte offset 17"),
            ("{\n  \"name\": \"x\",\n  \"name\": 1\n}", 3, 3, #"duplicate key "name""#),
            ("{\r\n\"a\":1,\r\n\"a\":2}", 3, 1, #"duplicate key "a""#),
            (#"{"a":1,"\u0061":2}"#, 1, 8, #"duplicate key "a""#),
            ("[\r1,\r]", 3, 1, "expected a JSON value after ',', found ']' (JSON allows no trailing comma)"),
            ("{\"é\": x}", 1, 7, "expected a JSON value, found 'x'"),
            ("[\"😀\" 1]", 1, 6, "expected ',' or ']' after array element, found '1'"),
            (String(repeating: "[", count: 513), 1, 513, "arrays and objects nest deeper than 512 levels")
        ])
    func errorPosition(text: String, line: Int, column: Int, message: String) throws {
        let error = try #require(throws: JSONParseError.self) { try JSONValue.parse(text) }
        #expect(error.description == "line \(line), column \(column): \(message)")
    }

    @Test(
        "invalid UTF-8 in a string names the byte offset",
        arguments: [
            ([0x22, 0xFF, 0x22], 1, 1, 2),
            ([0x22, 0x80, 0x22], 1, 1, 2), // stray continuation byte
            ([0x22, 0xC3, 0x22], 1, 1, 2), // truncated
            ([0x22, 0xC0, 0x80, 0x22], 1, 1, 2), // overlong
            ([0x22, 0xED, 0xA0, 0x80, 0x22], 1, 1, 2), // surrogate
            ([0x22, 0xF4, 0x90, 0x80, 0x80, 0x22], 1, 1, 2), // past U+10FFFF
            ([0x22, 0xF0, 0x9F, 0x98], 1, 1, 2), // cut off by end of input
            ([0x22, 0xC3, 0xA9, 0xFF, 0x22], 3, 1, 3),
            ([0x5B, 0x0A, 0x22, 0xE2, 0x82, 0x22, 0x5D], 3, 2, 2)
        ] as [([UInt8], Int, Int, Int)])
    func invalidUTF8(bytes: [UInt8], offset: Int, line: Int, column: Int) throws {
        let error = try #require(throws: JSONParseError.self) { try JSONValue.parse(bytes) }
        let hex = String(bytes[offset], radix: 16, uppercase: true)
        #expect(error.message == "invalid UTF-8 sequence starting with byte 0x\(hex) at byte offset \(offset)")
        #expect((error.byteOffset, error.line, error.column) == (offset, line, column))
    }

    @Test("a stray byte outside strings is shown in hex")
    func strayByte() throws {
        let error = try #require(throws: JSONParseError.self) { try JSONValue.parse([0x5B, 0xFF] as [UInt8]) }
        #expect(error.description == "line 1, column 2: expected a JSON value, found invalid UTF-8 byte 0xFF")
    }

    @Test("nesting stops at the limit, however deep the input goes")
    func nestingLimit() throws {
        let depth = JSONValue.maximumNestingDepth
        let arrays = String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
        #expect(try JSONValue.parse(arrays).serializedString == arrays)
        let objects = String(repeating: #"{"a":"#, count: depth) + "1" + String(repeating: "}", count: depth)
        #expect(try JSONValue.parse(objects).serializedString == objects)
        let hostile = try #require(throws: JSONParseError.self) {
            try JSONValue.parse(String(repeating: #"[{"a":"#, count: 100_000))
        }
        #expect(hostile.byteOffset == 512 / 2 * 6)
    }

    @Test("a duplicate key in a large object is found at its position")
    func duplicateInLargeObject() throws {
        let members = (0..<40).map { #""k\#($0)":\#($0)"# }.joined(separator: ",")
        let prefix = "{" + members + ","
        let error = try #require(throws: JSONParseError.self) { try JSONValue.parse(prefix + #""k7":0}"#) }
        #expect(error.message == #"duplicate key "k7""#)
        #expect(error.column == prefix.utf8.count + 1)
    }

    @Test("truncated and corrupted documents throw or parse, and what parses round-trips")
    func robustness() throws {
        let document = Array(#"{"a":[1,-2.5e3,true,null,"x\u00e9\n"],"b":{"c":"😀"}, "d" : false}"#.utf8)
        var variants = (0...document.count).map { Array(document[..<$0]) }
        for index in document.indices {
            for byte: UInt8 in [0x00, 0x22, 0x2C, 0x5C, 0x5D, 0x7D, 0x30, 0x75, 0xC3, 0xFF] {
                var corrupted = document
                corrupted[index] = byte
                variants.append(corrupted)
            }
        }
        for bytes in variants {
            let value: JSONValue
            do {
                value = try JSONValue.parse(bytes)
            } catch {
                #expect(error.byteOffset <= bytes.count && error.line >= 1 && error.column >= 1)
                continue
            }
            #expect(try JSONValue.parse(value.serialized()) == value)
        }
    }

    // MARK: Strings and numbers

    @Test(
        "escapes decode, including surrogate pairs",
        arguments: [
            (#""\u0041""#, "A"), (#""\u00e9""#, "é"), (#""\u20AC""#, "€"), (#""\uD83D\uDE00""#, "😀"),
            (#""\ud83d\ude00""#, "😀"), (#""\u0000""#, "\u{0}"), (#""x\u00e9y\uD834\uDD1Ez""#, "xéy𝄞z"),
            (#""a\"b\\c\/d\b\f\n\r\t""#, "a\"b\\c/d\u{8}\u{C}\n\r\t"), (#""é😀""#, "é😀")
        ])
    func escapes(text: String, expected: String) throws {
        #expect(try JSONValue.parse(text) == .string(expected))
    }

    @Test("special bytes are found at every position of a long string", arguments: 0..<20)
    func longStrings(offset: Int) throws {
        let head = String(repeating: "a", count: offset)
        let tail = String(repeating: "b", count: 20)
        for (written, decoded) in [(#"\n"#, "\n"), (#"\""#, "\""), ("é", "é"), ("😀", "😀"), ("", "")] {
            #expect(try JSONValue.parse("\"\(head)\(written)\(tail)\"") == .string(head + decoded + tail))
        }
        let error = try #require(throws: JSONParseError.self) { try JSONValue.parse("\"\(head)\u{7}\(tail)\"") }
        #expect(error.byteOffset == offset + 1)
        let unterminated = try #require(throws: JSONParseError.self) { try JSONValue.parse("\"\(head)\(tail)") }
        #expect(unterminated.byteOffset == 0)
    }

    @Test(
        "numbers parse to the nearest double",
        arguments: [
            ("0", 0), ("1e300", 1e300), ("1.5e-7", 1.5e-7), ("12345678901234", 12_345_678_901_234),
            ("9007199254740992", 9_007_199_254_740_992), ("9007199254740993", 9_007_199_254_740_992),
            ("0.1", 0.1), ("1E2", 100), ("1e+2", 100), ("2.5E-3", 0.0025), ("-123.456", -123.456),
            ("0.000001", 1e-6), ("1e-400", 0), ("0e999999", 0), ("1.00000000000000000000001", 1),
            ("123456789012345678901234567890", 1.2345678901234568e29), ("100000000000000000000000", 1e23),
            ("1.7976931348623157e308", .greatestFiniteMagnitude), ("5e-324", .leastNonzeroMagnitude)
        ] as [(String, Double)])
    func numbers(text: String, expected: Double) throws {
        #expect(try JSONValue.parse(text) == .number(expected))
    }

    @Test("negative zero keeps its sign")
    func negativeZero() throws {
        let value = try #require(try JSONValue.parse("-0").numberValue)
        #expect(value == 0 && value.sign == .minus)
        #expect(JSONValue.number(-0.0).serializedString == "-0")
    }

    @Test(
        "intValue is set only for whole numbers",
        arguments: [
            ("12345678901234", 12_345_678_901_234), ("-0", 0), ("1e3", 1000), ("1.5", nil), ("\"3\"", nil), ("1e300", nil)
        ] as [(String, Int?)])
    func intValue(text: String, expected: Int?) throws {
        #expect(try JSONValue.parse(text).intValue == expected)
    }

    @Test("numbers JSON cannot express serialize as null")
    func nonFinite() {
        let value: JSONValue = [.number(.infinity), .number(-.infinity), .number(.nan)]
        #expect(value.serializedString == "[null,null,null]")
    }

    @Test("serialized strings escape what JSON requires and survive a round trip")
    func escaping() throws {
        let controls = String(decoding: (0x00..<0x20).map { UInt8($0) }, as: UTF8.self)
        let value: JSONValue = [.string(controls + #"quote " backslash \ slash / é 😀 👩‍👩‍👧 \#u{7F}"#)]
        let bytes = value.serialized()
        #expect(!bytes.contains { $0 < 0x20 })
        #expect(try JSONValue.parse(bytes) == value)
        #expect(JSONValue.string("\u{1}\n\"\\/é\u{1F}").serializedString == #""\u0001\n\"\\/é\u001f""#)
    }

    @Test("each control character round-trips", arguments: 0x00..<0x20)
    func controlCharacter(code: Int) throws {
        let value = JSONValue.string("a\(Character(Unicode.Scalar(UInt8(code))))b")
        #expect(try JSONValue.parse(value.serialized()) == value)
    }

    // MARK: Objects and accessors

    @Test("objects keep keys in the order written")
    func keyOrder() throws {
        var object = try #require(try JSONValue.parse(#"{"zeta":1,"alpha":2,"mid":3}"#).objectValue)
        #expect(object.keys == ["zeta", "alpha", "mid"])
        object.set("alpha", 20)
        object.set("new", 4)
        object["zeta"] = nil
        #expect(object.keys == ["alpha", "mid", "new"])
        #expect(JSONValue.object(object).serializedString == #"{"alpha":20,"mid":3,"new":4}"#)
        #expect(object.map(\.key) == object.keys)
    }

    @Test("large objects keep order and look keys up after edits")
    func largeObject() {
        var object = JSONObject((0..<30).map { ("k\(29 - $0)", JSONValue.number(Double($0))) })
        #expect(object.keys.first == "k29" && object.keys.last == "k0")
        object.removeValue(forKey: "k20")
        object.set("k3", "three")
        #expect(object.count == 29 && object["k20"] == nil)
        #expect(object["k3"] == "three" && object["k0"] == 29)
        #expect(object.keys.firstIndex(of: "k3") == 25)
    }

    @Test("objects are equal whatever their member order, as JSON defines")
    func unorderedEquality() throws {
        let first = try JSONValue.parse(#"{"a":1,"b":[2]}"#)
        let second = try JSONValue.parse(#"{"b":[2],"a":1}"#)
        #expect(first == second)
        #expect(Set([first, second]).count == 1)
        #expect(first != (try JSONValue.parse(#"{"a":1,"b":[3]}"#)))
    }

    @Test(
        "accessors return a value only for the matching kind",
        arguments: [
            (JSONValue.null, "null"), (true, "a boolean"), (1.5, "a number"), ("s", "a string"), ([1], "an array"), (["k": 1], "an object")
        ] as [(JSONValue, String)])
    func accessors(value: JSONValue, typeName: String) {
        #expect(value.typeName == typeName)
        #expect((value.boolValue != nil) == (typeName == "a boolean"))
        #expect((value.numberValue != nil) == (typeName == "a number"))
        #expect((value.stringValue != nil) == (typeName == "a string"))
        #expect((value.arrayValue != nil) == (typeName == "an array"))
        #expect((value.objectValue != nil) == (typeName == "an object"))
        #expect(value.isNull == (typeName == "null"))
    }

    @Test("subscripts reach into objects and arrays")
    func subscripts() throws {
        let reply = try JSONValue.parse(#"{"sessionid":"abc","list":[10,{"x":true}]}"#)
        #expect(reply["sessionid"]?.stringValue == "abc")
        #expect(reply["list"]?[1]?["x"]?.boolValue == true)
        #expect(reply["missing"] == nil && reply["list"]?[2] == nil && reply[0] == nil)
    }
}
