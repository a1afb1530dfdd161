extension JSONParser {
    /// One open array or object: whether a member or element has been read yet, and where its keys start in
    /// ``keys`` so a repeated key is found wherever it appears.
    struct Container {
        var isObject: Bool
        var isEmpty = true
        var firstKey: Int
    }

    /// A decoded key: in the input when it has no escapes, else in memory of its own (``decodedKeys``).
    struct Key: Equatable {
        var bytes: UnsafeBufferPointer<UInt8>

        static func == (lhs: Key, rhs: Key) -> Bool {
            lhs.bytes.count == rhs.bytes.count && equalBytes(lhs.bytes.baseAddress, rhs.bytes.baseAddress, lhs.bytes.count)
        }
    }

    static func equalBytes(_ lhs: UnsafePointer<UInt8>?, _ rhs: UnsafePointer<UInt8>?, _ count: Int) -> Bool {
        guard count > 0, let lhs, let rhs else { return true }
        var offset = 0
        while count - offset >= 8 {
            let a = UnsafeRawPointer(lhs + offset).loadUnaligned(as: UInt64.self)
            let b = UnsafeRawPointer(rhs + offset).loadUnaligned(as: UInt64.self)
            if a != b { return false }
            offset += 8
        }
        while offset < count {
            if lhs[offset] != rhs[offset] { return false }
            offset += 1
        }
        return true
    }

    /// Above this many members an object's keys are checked for repeats through a set.
    static var linearKeyLimit: Int { 12 }

    /// Opens the array or object whose bracket is at `position`.
    mutating func enter(object: Bool) throws(JSONParseError) {
        guard containers.count < JSONValue.maximumNestingDepth else {
            throw error(at: position, "arrays and objects nest deeper than \(JSONValue.maximumNestingDepth) levels")
        }
        containers.append(Container(isObject: object, firstKey: keys.count))
        position += 1
    }

    /// Reads up to the next member of the innermost object: its key (then ``currentKey``) and colon.
    ///
    /// - Returns: false when the object closes instead.
    mutating func nextMember() throws(JSONParseError) -> Bool {
        let top = containers.count - 1
        skipWhitespace()
        let expected: String
        if containers[top].isEmpty {
            if consume(UInt8(ascii: "}")) {
                leave()
                return false
            }
            expected = "expected a string key or '}'"
        } else {
            guard try consumeSeparator(closing: UInt8(ascii: "}")) else {
                guard consume(UInt8(ascii: "}")) else { throw unexpected("expected ',' or '}' after object member") }
                leave()
                return false
            }
            expected = "expected a string key after ','"
        }
        containers[top].isEmpty = false
        try readKey(expected: expected)
        return true
    }

    /// Reads up to the next element of the innermost array.
    ///
    /// - Returns: false when the array closes instead.
    mutating func nextElement() throws(JSONParseError) -> Bool {
        let top = containers.count - 1
        skipWhitespace()
        if containers[top].isEmpty {
            if consume(UInt8(ascii: "]")) {
                leave()
                return false
            }
            containers[top].isEmpty = false
            return true
        }
        if try consumeSeparator(closing: UInt8(ascii: "]")) { return true }
        guard consume(UInt8(ascii: "]")) else { throw unexpected("expected ',' or ']' after array element") }
        leave()
        return false
    }

    /// The key ``nextMember()`` read last, decoded.
    var currentKey: Key { keys[keys.count - 1] }

    var currentKeyString: String { String(decoding: currentKey.bytes, as: UTF8.self) }

    /// Validates the value at `position` and moves past it, building nothing.
    mutating func skipValue() throws(JSONParseError) {
        let depth = containers.count
        repeat {
            switch try valueStart() {
            case UInt8(ascii: "{"):
                try enter(object: true)
                if try nextMember() { continue }
            case UInt8(ascii: "["):
                try enter(object: false)
                if try nextElement() { continue }
            case .quote:
                _ = try readStringBytes()
            default:
                try skipScalar()
            }
            // The value is complete: close every container that ends here, down to where the skip began.
            while containers.count > depth {
                if containers[containers.count - 1].isObject {
                    if try nextMember() { break }
                } else {
                    if try nextElement() { break }
                }
            }
        } while containers.count > depth
    }

    /// The first byte of the value at `position`, after whitespace; its end of input is an error.
    mutating func valueStart() throws(JSONParseError) -> UInt8 {
        skipWhitespace()
        guard position < bytes.count else { throw unexpected("expected a JSON value") }
        return bytes[position]
    }

    /// Reads a literal or number, or throws when none starts at `position`.
    mutating func skipScalar() throws(JSONParseError) {
        switch bytes[position] {
        case UInt8(ascii: "t"): try expectLiteral("true")
        case UInt8(ascii: "f"): try expectLiteral("false")
        case UInt8(ascii: "n"): try expectLiteral("null")
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): _ = try readNumber()
        default: throw unexpected("expected a JSON value")
        }
    }

    /// After the document's one value only whitespace may follow.
    mutating func finish() throws(JSONParseError) {
        skipWhitespace()
        guard position == bytes.count else { throw unexpected("expected end of input after the JSON value") }
    }

    private mutating func leave() {
        let closed = containers.removeLast()
        guard closed.isObject else { return }
        keys.removeLast(keys.count - closed.firstKey)
        if !keySets.isEmpty { keySets[containers.count + 1] = nil }
    }

    /// Reads a member's key and its colon, rejecting a key the innermost object already has.
    private mutating func readKey(expected: String) throws(JSONParseError) {
        guard position < bytes.count, bytes[position] == .quote else { throw unexpected(expected) }
        let start = position
        let key: Key
        switch try readStringBytes() {
        case .input(let range):
            key = Key(bytes: UnsafeBufferPointer(rebasing: bytes[range]))
        case .scratch:
            // Escaped keys are rare: each gets memory of its own that stays put until the parser is released.
            let copy = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: scratch.count)
            _ = copy.initialize(from: scratch)
            decodedKeys.append(copy)
            key = Key(bytes: UnsafeBufferPointer(copy))
        }
        let first = containers[containers.count - 1].firstKey
        let depth = containers.count
        let repeated: Bool
        if !keySets.isEmpty, keySets[depth] != nil {
            repeated = keySets[depth]!.insert(Array(key.bytes)).inserted == false
        } else {
            repeated = keys[first...].contains { $0 == key }
            if !repeated && keys.count - first >= Self.linearKeyLimit {
                keySets[depth] = Set(keys[first...].map { Array($0.bytes) } + [Array(key.bytes)])
            }
        }
        keys.append(key)
        if repeated {
            throw error(at: start, "duplicate key \(JSONValue.string(currentKeyString).serializedString)")
        }
        skipWhitespace()
        guard consume(UInt8(ascii: ":")) else { throw unexpected("expected ':' after object key") }
    }

    /// Frees the keys decoded from escapes; the parser's keys must not be used after.
    mutating func release() {
        for copy in decodedKeys { copy.deallocate() }
        decodedKeys.removeAll()
    }

    /// Consumes a `,`, and names a trailing comma as such when `closing` follows it.
    private mutating func consumeSeparator(closing: UInt8) throws(JSONParseError) -> Bool {
        guard consume(UInt8(ascii: ",")) else { return false }
        skipWhitespace()
        if position < bytes.count, bytes[position] == closing {
            let expected = closing == UInt8(ascii: "}") ? "a string key" : "a JSON value"
            let bracket = Character(Unicode.Scalar(closing))
            throw error(at: position, "expected \(expected) after ',', found '\(bracket)' (JSON allows no trailing comma)")
        }
        return true
    }

    mutating func expectLiteral(_ literal: StaticString) throws(JSONParseError) {
        let length = literal.utf8CodeUnitCount
        guard bytes.count - position >= length else { throw unexpected("expected a JSON value") }
        for offset in 0..<length where bytes[position + offset] != literal.utf8Start[offset] {
            throw unexpected("expected a JSON value")
        }
        position += length
    }

    mutating func skipWhitespace() {
        while position < bytes.count {
            switch bytes[position] {
            case UInt8(ascii: " "), .lineFeed, .carriageReturn, UInt8(ascii: "\t"): position += 1
            default: return
            }
        }
    }
}
