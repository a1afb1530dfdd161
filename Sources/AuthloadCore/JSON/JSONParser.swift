extension JSONValue {
    /// How deeply arrays and objects may nest before parsing stops with an error.
    public static let maximumNestingDepth = 512

    /// Reads one JSON document (RFC 8259, strictly) from UTF-8 bytes.
    ///
    /// Contiguous collections such as `[UInt8]`, `ArraySlice<UInt8>` and `UnsafeRawBufferPointer`
    /// are read in place; anything else is copied into an array first. A leading UTF-8 byte-order
    /// mark is skipped, as RFC 8259 allows.
    ///
    /// - Throws: ``JSONParseError`` naming the line, column and byte offset of the first problem.
    public static func parse(_ bytes: some Collection<UInt8>) throws(JSONParseError) -> JSONValue {
        let result = bytes.withContiguousStorageIfAvailable { buffer in
            Result { () throws(JSONParseError) -> JSONValue in try JSONParser.parse(buffer) }
        }
        if let result { return try result.get() }
        return try parse(Array(bytes))
    }

    /// Reads one JSON document (RFC 8259, strictly) from text.
    ///
    /// - Throws: ``JSONParseError`` naming the line, column and byte offset of the first problem.
    public static func parse(_ text: String) throws(JSONParseError) -> JSONValue {
        var text = text
        return try text.withUTF8 { buffer in
            Result { () throws(JSONParseError) -> JSONValue in try JSONParser.parse(buffer) }
        }.get()
    }
}

/// Reads one JSON document from contiguous bytes.
///
/// It keeps open arrays and objects on an explicit stack instead of recursing, so hostile nesting
/// costs a bounded amount of heap and never the thread's stack, even in debug builds. Every read
/// is checked against the end of the buffer: any input either parses or throws.
struct JSONParser {
    let bytes: UnsafeBufferPointer<UInt8>
    var position: Int
    /// Reused by every string that needs unescaping, so a document allocates one buffer for them.
    var scratch: [UInt8] = []

    /// One open array or object. Both storages live here so that closing one moves it out uniquely
    /// referenced, and appending to it never copies.
    private struct Frame {
        var isObject: Bool
        var elements: [JSONValue] = []
        var object = JSONObject()
        var key = ""
    }

    static func parse(_ bytes: UnsafeBufferPointer<UInt8>) throws(JSONParseError) -> JSONValue {
        var parser = JSONParser(bytes: bytes, position: byteOrderMarkLength(bytes))
        return try parser.parseDocument()
    }

    static func byteOrderMarkLength(_ bytes: UnsafeBufferPointer<UInt8>) -> Int {
        bytes.count >= 3 && bytes[0] == 0xEF && bytes[1] == 0xBB && bytes[2] == 0xBF ? 3 : 0
    }

    private mutating func parseDocument() throws(JSONParseError) -> JSONValue {
        var frames: [Frame] = []
        nextValue: while true {
            var value: JSONValue
            skipWhitespace()
            guard position < bytes.count else { throw unexpected("expected a JSON value") }
            switch bytes[position] {
            case UInt8(ascii: "{"):
                try open(&frames, isObject: true)
                if consume(UInt8(ascii: "}")) {
                    frames.removeLast()
                    value = .object(JSONObject())
                } else {
                    frames[frames.count - 1].key = try readKey(of: JSONObject(), expected: "expected a string key or '}'")
                    continue nextValue
                }
            case UInt8(ascii: "["):
                try open(&frames, isObject: false)
                guard consume(UInt8(ascii: "]")) else { continue nextValue }
                frames.removeLast()
                value = .array([])
            case .quote:
                value = .string(try readString())
            case UInt8(ascii: "t"):
                value = .bool(true)
                try expectLiteral("true")
            case UInt8(ascii: "f"):
                value = .bool(false)
                try expectLiteral("false")
            case UInt8(ascii: "n"):
                value = .null
                try expectLiteral("null")
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                value = .number(try readNumber())
            default:
                throw unexpected("expected a JSON value")
            }

            // The value is complete: add it to its container and close every container that ends here.
            while !frames.isEmpty {
                let top = frames.count - 1
                if frames[top].isObject {
                    frames[top].object.appendNew(frames[top].key, value)
                    if try consumeSeparator(closing: UInt8(ascii: "}")) {
                        frames[top].key = try readKey(of: frames[top].object, expected: "expected a string key after ','")
                        continue nextValue
                    }
                    guard consume(UInt8(ascii: "}")) else { throw unexpected("expected ',' or '}' after object member") }
                    value = .object(frames.removeLast().object)
                } else {
                    if frames[top].elements.capacity == 0 { frames[top].elements.reserveCapacity(4) }
                    frames[top].elements.append(value)
                    if try consumeSeparator(closing: UInt8(ascii: "]")) { continue nextValue }
                    guard consume(UInt8(ascii: "]")) else { throw unexpected("expected ',' or ']' after array element") }
                    value = .array(frames.removeLast().elements)
                }
            }
            skipWhitespace()
            guard position == bytes.count else { throw unexpected("expected end of input after the JSON value") }
            return value
        }
    }

    private mutating func open(_ frames: inout [Frame], isObject: Bool) throws(JSONParseError) {
        guard frames.count < JSONValue.maximumNestingDepth else {
            throw error(at: position, "arrays and objects nest deeper than \(JSONValue.maximumNestingDepth) levels")
        }
        frames.append(Frame(isObject: isObject))
        position += 1
        skipWhitespace()
    }

    /// Reads a member's key and its colon, rejecting a key that `object` already has.
    private mutating func readKey(of object: JSONObject, expected: String) throws(JSONParseError) -> String {
        skipWhitespace()
        guard position < bytes.count, bytes[position] == .quote else { throw unexpected(expected) }
        let start = position
        let key = try readString()
        if object.position(of: key) != nil {
            throw error(at: start, "duplicate key \(JSONValue.string(key).serializedString)")
        }
        skipWhitespace()
        guard consume(UInt8(ascii: ":")) else { throw unexpected("expected ':' after object key") }
        return key
    }

    /// Consumes a `,`, and names a trailing comma as such when `closing` follows it.
    private mutating func consumeSeparator(closing: UInt8) throws(JSONParseError) -> Bool {
        skipWhitespace()
        guard consume(UInt8(ascii: ",")) else { return false }
        skipWhitespace()
        if position < bytes.count, bytes[position] == closing {
            let expected = closing == UInt8(ascii: "}") ? "a string key" : "a JSON value"
            let bracket = Character(Unicode.Scalar(closing))
            throw error(at: position, "expected \(expected) after ',', found '\(bracket)' (JSON allows no trailing comma)")
        }
        return true
    }

    private mutating func expectLiteral(_ literal: StaticString) throws(JSONParseError) {
        let length = literal.utf8CodeUnitCount
        guard bytes.count - position >= length else { throw unexpected("expected a JSON value") }
        for offset in 0..<length where bytes[position + offset] != literal.utf8Start[offset] {
            throw unexpected("expected a JSON value")
        }
        position += length
    }

    mutating func consume(_ byte: UInt8) -> Bool {
        guard position < bytes.count, bytes[position] == byte else { return false }
        position += 1
        return true
    }

    private mutating func skipWhitespace() {
        while position < bytes.count {
            switch bytes[position] {
            case UInt8(ascii: " "), .lineFeed, .carriageReturn, UInt8(ascii: "\t"): position += 1
            default: return
            }
        }
    }

    func error(at offset: Int, _ message: String) -> JSONParseError {
        JSONParseError(at: offset, in: bytes, message)
    }

    /// An error at the current position: `<expectation>, found <what is there>`.
    func unexpected(_ expectation: String, at offset: Int? = nil) -> JSONParseError {
        let offset = offset ?? position
        return error(at: offset, "\(expectation), found \(JSONParseError.found(at: offset, in: bytes))")
    }
}
