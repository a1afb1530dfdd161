/// Reads a JSON document value by value into the caller's own types, with no ``JSONValue`` tree in between.
///
/// Every byte is checked as ``JSONValue/parse(_:)`` checks it, skipped values and repeated keys included, and
/// errors are the same ``JSONParseError``s; only what the caller asks for becomes a `String` or a value. A value
/// the caller does not read is skipped, so a reader takes what it knows and ignores the rest. The typed reads
/// (``string()``, ``bool()``, …) answer nil for a value of another type, as ``JSONValue/stringValue`` does.
///
/// ```swift
/// var name: String?
/// try JSONReader.read(body) { reader in
///     try reader.readMembers { reader, key in
///         if key == "name" { name = try reader.string() }
///     }
/// }
/// ```
public struct JSONReader {
    var parser: JSONParser
    /// Values started so far, to find a member or element its reader left unread.
    @usableFromInline var started = 0

    /// What the next value is, from its first byte.
    public enum Kind: Sendable {
        case object, array, string, number, bool, null
    }

    /// Reads the one document in `bytes` with `body`, then checks that nothing but whitespace follows it.
    ///
    /// - Throws: ``JSONParseError`` naming the line, column and byte offset of the first problem.
    public static func read(_ bytes: [UInt8], _ body: (inout JSONReader) throws(JSONParseError) -> Void) throws(JSONParseError) {
        try bytes.withUnsafeBufferPointer { buffer in
            Result { () throws(JSONParseError) in
                var reader = JSONReader(parser: JSONParser(bytes: buffer))
                defer { reader.parser.release() }
                try body(&reader)
                if reader.started == 0 { try reader.skip() }
                try reader.parser.finish()
            }
        }.get()
    }

    /// The kind of the next value; throws when no value starts there.
    public mutating func kind() throws(JSONParseError) -> Kind {
        switch try parser.valueStart() {
        case UInt8(ascii: "{"): return .object
        case UInt8(ascii: "["): return .array
        case .quote: return .string
        case UInt8(ascii: "t"), UInt8(ascii: "f"): return .bool
        case UInt8(ascii: "n"): return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number
        default: throw parser.unexpected("expected a JSON value")
        }
    }

    /// Calls `member` with each member of the next value when it is an object; a member it leaves unread is skipped.
    ///
    /// - Returns: false, having skipped the value, when it is not an object.
    @discardableResult
    public mutating func readMembers(_ member: (inout JSONReader, Key) throws(JSONParseError) -> Void) throws(JSONParseError) -> Bool {
        var none: Void = ()
        return try readMembers(into: &none) { reader, key, _ throws(JSONParseError) in try member(&reader, key) }
    }

    /// Calls `member` with each member of the next value when it is an object, and `state` for it to fill in: a value
    /// filled in place, where one captured by the closure would be copied out of it whole.
    ///
    /// - Returns: false, having skipped the value, when it is not an object.
    ///
    /// Inlinable, as ``readElements(into:_:)`` is: a caller in another module gets it specialized, its `member` inlined
    /// into the loop, where each member of each object otherwise went through a generic call and a closure.
    @inlinable @discardableResult
    public mutating func readMembers<State>(
        into state: inout State, _ member: (inout JSONReader, Key, inout State) throws(JSONParseError) -> Void
    ) throws(JSONParseError) -> Bool {
        guard try enter(object: true) else { return false }
        while let key = try nextKey() {
            let before = started
            try member(&self, key, &state)
            if started == before { try skip() }
        }
        return true
    }

    /// Opens the object (or array) next and counts it as started; false, having skipped it, when it is something else.
    @usableFromInline
    mutating func enter(object: Bool) throws(JSONParseError) -> Bool {
        // The first byte compared in place; anything else is skipped, which throws as ``kind()`` would.
        guard try parser.valueStart() == (object ? UInt8(ascii: "{") : UInt8(ascii: "[")) else {
            try skip()
            return false
        }
        started += 1
        try parser.enter(object: object)
        return true
    }

    /// The key of the open object's next member, its colon read; nil when the object closes instead.
    @usableFromInline
    mutating func nextKey() throws(JSONParseError) -> Key? {
        try parser.nextMember() ? Key(bytes: parser.lastKey.bytes, head: parser.lastKey.head) : nil
    }

    /// True when the open array has another element; false when it closes instead.
    @usableFromInline
    mutating func nextElement() throws(JSONParseError) -> Bool {
        try parser.nextElement()
    }

    /// Calls `element` with each element of the next value when it is an array; an element it leaves unread is skipped.
    ///
    /// - Returns: false, having skipped the value, when it is not an array.
    @discardableResult
    public mutating func readElements(_ element: (inout JSONReader) throws(JSONParseError) -> Void) throws(JSONParseError) -> Bool {
        var none: Void = ()
        return try readElements(into: &none) { reader, _ throws(JSONParseError) in try element(&reader) }
    }

    /// Calls `element` with each element of the next value when it is an array, and `state` for it to fill in.
    ///
    /// - Returns: false, having skipped the value, when it is not an array.
    @inlinable @discardableResult
    public mutating func readElements<State>(
        into state: inout State, _ element: (inout JSONReader, inout State) throws(JSONParseError) -> Void
    ) throws(JSONParseError) -> Bool {
        guard try enter(object: false) else { return false }
        while try nextElement() {
            let before = started
            try element(&self, &state)
            if started == before { try skip() }
        }
        return true
    }

    /// The next value when it is a string; nil, having skipped it, when it is not.
    public mutating func string() throws(JSONParseError) -> String? {
        guard try parser.valueStart() == .quote else {
            try skip()
            return nil
        }
        started += 1
        return try parser.readString()
    }

    /// The next value when it is a string, as the one of `known` it equals when there is one; nil, having skipped it,
    /// when it is not a string.
    public mutating func string(known: JSONKnownStrings) throws(JSONParseError) -> String? {
        guard try parser.valueStart() == .quote else {
            try skip()
            return nil
        }
        started += 1
        return try parser.readString(known: known)
    }

    /// The next value when it is `true` or `false`; nil, having skipped it, when it is not.
    public mutating func bool() throws(JSONParseError) -> Bool? {
        let first = try parser.valueStart()
        guard first == UInt8(ascii: "t") || first == UInt8(ascii: "f") else {
            try skip()
            return nil
        }
        started += 1
        let value = first == UInt8(ascii: "t")
        try parser.expectLiteral(value ? "true" : "false")
        return value
    }

    /// The next value when it is a number; nil, having skipped it, when it is not.
    public mutating func number() throws(JSONParseError) -> Double? {
        guard try kind() == .number else {
            try skip()
            return nil
        }
        started += 1
        return try parser.readNumber()
    }

    /// The next value when it is a whole number that fits an `Int`, as ``JSONValue/intValue`` reads it.
    public mutating func int() throws(JSONParseError) -> Int? {
        try number().flatMap { Int(exactly: $0) }
    }

    /// The next value, whatever it is, as a tree.
    public mutating func value() throws(JSONParseError) -> JSONValue {
        started += 1
        // A string, the value most often read whole, without the tree builder's stacks.
        if try parser.valueStart() == .quote { return .string(try parser.readString()) }
        return try parser.readValue()
    }

    /// Checks the next value and moves past it.
    public mutating func skip() throws(JSONParseError) {
        started += 1
        try parser.skipValue()
    }

    /// Where the next unread byte is, for ``value(since:)``.
    public var offset: Int { parser.position }

    /// The value that was read from `offset` up to here, as a tree: for a reader that learns only after reading a
    /// value that it wants it whole.
    public func value(since offset: Int) throws(JSONParseError) -> JSONValue {
        var again = JSONParser(bytes: UnsafeBufferPointer(rebasing: parser.bytes[..<parser.position]))
        defer { again.release() }
        again.position = offset
        return try again.readValue()
    }
}

extension JSONReader {
    /// A member's key, decoded, compared with literals as bytes: `key == "name"`, or `case "name":` in a switch.
    ///
    /// It points into the reader's memory: use it inside the call it is given to, never after ``read(_:_:)`` returns.
    public struct Key: CustomStringConvertible {
        @usableFromInline let bytes: UnsafeBufferPointer<UInt8>
        /// Its first eight bytes (all of a shorter key's), the first the lowest: a key is compared with a literal as
        /// one word, the literal's folded into a constant where `==` is inlined.
        @usableFromInline let head: UInt64

        @usableFromInline
        init(bytes: UnsafeBufferPointer<UInt8>, head: UInt64) {
            self.bytes = bytes
            self.head = head
        }

        public var description: String { String(decoding: bytes, as: UTF8.self) }

        /// Inlinable, so that a `switch` over keys compares each length and first eight bytes in place, as constants,
        /// and calls out only for the rest of a longer key that matches them.
        @inlinable @inline(__always)
        public static func == (key: Key, literal: StaticString) -> Bool {
            let count = literal.utf8CodeUnitCount
            guard key.bytes.count == count else { return false }
            var head: UInt64 = 0
            for index in 0..<min(count, 8) {
                head |= UInt64(literal.utf8Start[index]) &<< (UInt64(truncatingIfNeeded: index) &* 8)
            }
            return key.head == head && (count <= 8 || equalBytes(key, literal))
        }

        @usableFromInline
        static func equalBytes(_ key: Key, _ literal: StaticString) -> Bool {
            JSONParser.equalBytes(key.bytes.baseAddress, literal.utf8Start, key.bytes.count)
        }

        @inlinable @inline(__always)
        public static func ~= (literal: StaticString, key: Key) -> Bool { key == literal }
    }
}
