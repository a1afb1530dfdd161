extension JSONParser {
    /// One open array or object: whether a member or element has been read yet, and where its keys start in
    /// ``keys`` so a repeated key is found wherever it appears.
    struct Container {
        var isObject: Bool
        var isEmpty = true
        /// Whether its keys are checked for repeats through ``keySets`` (it outgrew ``linearKeyLimit``).
        var keysInSet = false
        var firstKey: Int
        /// A bit for each key read so far, picked by its fingerprint: a key whose bit is clear repeats none, found
        /// without comparing it with the keys before it, which only a key whose bit is set is.
        var keyBits: UInt64 = 0
    }

    /// A decoded key: in the input when it has no escapes, else in memory of its own (``decodedKeys``).
    struct Key: Equatable {
        var bytes: UnsafeBufferPointer<UInt8>
        /// Its length and first eight bytes: two keys that differ here differ, so the search for a repeated key compares
        /// one word with each key before it, and the bytes only of a key that may be the same.
        var fingerprint: UInt64

        /// Its first eight bytes (all of a shorter key's), the first the lowest, from ``fingerprint``.
        var head: UInt64 { fingerprint ^ Self.lengthMark(bytes.count) }

        @inline(__always)
        static func lengthMark(_ count: Int) -> UInt64 { UInt64(truncatingIfNeeded: count) &* 0x9E37_79B9_7F4A_7C15 }

        /// - Parameter slack: how many bytes after the key may be read: its first eight bytes are loaded as one word,
        ///   then those past its end masked off, where bytes picked from its middle and end waited for its end to be
        ///   found.
        @inline(__always)
        init(bytes: UnsafeBufferPointer<UInt8>, slack: Int = 0) {
            self.bytes = bytes
            let count = bytes.count
            var head: UInt64 = 0
            if let base = bytes.baseAddress, count >= 8 || count + slack >= 8 {
                head = UInt64(littleEndian: UnsafeRawPointer(base).loadUnaligned(as: UInt64.self))
                if count < 8 { head &= (1 << (UInt64(truncatingIfNeeded: count) &* 8)) &- 1 }
            } else {
                for index in 0..<count { head |= UInt64(bytes[index]) << (UInt64(truncatingIfNeeded: index) &* 8) }
            }
            fingerprint = head ^ Self.lengthMark(count)
        }

        @inline(__always)
        init(bytes: UnsafeBufferPointer<UInt8>, fingerprint: UInt64) {
            self.bytes = bytes
            self.fingerprint = fingerprint
        }

        static func == (lhs: Key, rhs: Key) -> Bool {
            lhs.fingerprint == rhs.fingerprint && equalBytes(lhs.bytes.baseAddress, rhs.bytes.baseAddress, lhs.bytes.count)
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
        // The last few bytes, a key's or a short key's all, four, two and one at a time rather than each on its own.
        if count - offset >= 4 {
            let a = UnsafeRawPointer(lhs + offset).loadUnaligned(as: UInt32.self)
            let b = UnsafeRawPointer(rhs + offset).loadUnaligned(as: UInt32.self)
            if a != b { return false }
            offset += 4
        }
        if count - offset >= 2 {
            let a = UnsafeRawPointer(lhs + offset).loadUnaligned(as: UInt16.self)
            let b = UnsafeRawPointer(rhs + offset).loadUnaligned(as: UInt16.self)
            if a != b { return false }
            offset += 2
        }
        return offset == count || lhs[offset] == rhs[offset]
    }

    /// Above this many members an object's keys are checked for repeats through a set.
    static var linearKeyLimit: Int { 12 }

    /// Opens the array or object whose bracket is at `position`.
    @inline(__always)
    mutating func enter(object: Bool) throws(JSONParseError) {
        guard depth < JSONValue.maximumNestingDepth else {
            throw error(at: position, "arrays and objects nest deeper than \(JSONValue.maximumNestingDepth) levels")
        }
        // The stack holds the containers around the innermost: `depth - 1` of them.
        if depth > 0 { containers.write(top, at: depth &- 1) }
        top = Container(isObject: object, firstKey: keyCount)
        depth += 1
        position += 1
    }

    /// Reads up to the next member of the innermost object: its key (then ``currentKey``) and colon.
    ///
    /// - Returns: false when the object closes instead.
    mutating func nextMember() throws(JSONParseError) -> Bool {
        skipWhitespace()
        let first = top.isEmpty
        if first {
            if consume(UInt8(ascii: "}")) {
                leave()
                return false
            }
            top.isEmpty = false
        } else {
            guard try consumeSeparator(closing: UInt8(ascii: "}")) else {
                guard consume(UInt8(ascii: "}")) else { throw unexpected("expected ',' or '}' after object member") }
                leave()
                return false
            }
        }
        guard position < bytes.count, bytes[position] == .quote else { throw missingKey(first: first) }
        try readKey()
        return true
    }

    /// Reads up to the next element of the innermost array.
    ///
    /// - Returns: false when the array closes instead.
    @inline(__always)
    mutating func nextElement() throws(JSONParseError) -> Bool {
        skipWhitespace()
        if top.isEmpty {
            if consume(UInt8(ascii: "]")) {
                leave()
                return false
            }
            top.isEmpty = false
            return true
        }
        if try consumeSeparator(closing: UInt8(ascii: "]")) { return true }
        guard consume(UInt8(ascii: "]")) else { throw unexpected("expected ',' or ']' after array element") }
        leave()
        return false
    }

    /// The key ``nextMember()`` read last, decoded.
    var currentKey: Key { keys[keyCount - 1] }

    var currentKeyString: String { String(decoding: currentKey.bytes, as: UTF8.self) }

    /// Validates the value at `position` and moves past it, building nothing.
    mutating func skipValue() throws(JSONParseError) {
        let depth = self.depth
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
            while self.depth > depth {
                if top.isObject {
                    if try nextMember() { break }
                } else {
                    if try nextElement() { break }
                }
            }
        } while self.depth > depth
    }

    /// The first byte of the value at `position`, after whitespace; its end of input is an error.
    @inline(__always)
    mutating func valueStart() throws(JSONParseError) -> UInt8 {
        skipWhitespace()
        guard position < bytes.count else { throw notAValue() }
        return bytes[position]
    }

    /// Reads a literal or number, or throws when none starts at `position`.
    mutating func skipScalar() throws(JSONParseError) {
        switch bytes[position] {
        case UInt8(ascii: "t"): try expectLiteral("true")
        case UInt8(ascii: "f"): try expectLiteral("false")
        case UInt8(ascii: "n"): try expectLiteral("null")
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): _ = try readNumber()
        default: throw notAValue()
        }
    }

    /// After the document's one value only whitespace may follow.
    mutating func finish() throws(JSONParseError) {
        skipWhitespace()
        guard position == bytes.count else { throw unexpected("expected end of input after the JSON value") }
    }

    @inline(__always)
    private mutating func leave() {
        let closed = top
        depth -= 1
        if depth > 0 { top = containers[depth &- 1] }
        guard closed.isObject else { return }
        keyCount = closed.firstKey
        if closed.keysInSet { keySets[depth + 1] = nil }
    }

    /// The error for a member that does not start with its key's quote; kept out of ``nextMember()``, which runs for
    /// every member.
    @inline(never)
    private func missingKey(first: Bool) -> JSONParseError {
        unexpected(first ? "expected a string key or '}'" : "expected a string key after ','")
    }

    /// Reads a member's key, whose quote is at `position`, and its colon, rejecting a key the innermost object
    /// already has.
    ///
    /// Inlined into ``nextMember()``, its one caller, which is left to the compiler: with both marked, the compiler
    /// inlined ``nextMember()`` into the reader and kept this a call of its own from every skipped member.
    @inline(__always)
    private mutating func readKey() throws(JSONParseError) {
        let start = position
        let key: Key
        let first = position &+ 1
        // A plain ASCII key shorter than eight bytes, most of them, ends in the first word after its quote, which is
        // also its head; a longer one is found whole by one scan; any other is read by the full loop.
        if bytes.count &- first >= 8, let base = bytes.baseAddress,
            case let word = UInt64(littleEndian: UnsafeRawPointer(base + first).loadUnaligned(as: UInt64.self)),
            case let special = Self.specialBytes(in: word), special != 0,
            case let count = special.trailingZeroBitCount &>> 3, base[first &+ count] == .quote
        {
            let head = word & ((1 &<< (UInt64(truncatingIfNeeded: count) &* 8)) &- 1)
            key = Key(bytes: UnsafeBufferPointer(start: base + first, count: count), fingerprint: head ^ Key.lengthMark(count))
            position = first &+ count &+ 1
        } else if case let end = Self.endOfPlainRun(from: first, in: bytes), end < bytes.count, bytes[end] == .quote {
            key = Key(bytes: UnsafeBufferPointer(rebasing: bytes[position &+ 1..<end]), slack: bytes.count &- end)
            position = end &+ 1
        } else {
            key = try readEscapedKey()
        }
        let bit: UInt64 = 1 &<< ((key.fingerprint &* 0x9E37_79B9_7F4A_7C15) &>> 58)
        let repeated = top.keyBits & bit != 0 || top.keysInSet ? isRepeated(key) : false
        top.keyBits |= bit
        keys.write(key, at: keyCount)
        keyCount &+= 1
        lastKey = key
        if repeated { throw duplicateKey(at: start) }
        skipWhitespace()
        guard consume(UInt8(ascii: ":")) else { throw missingColon() }
    }

    /// Reads a key that is not plain ASCII, its quote at `position`, as any string is read.
    @inline(never)
    private mutating func readEscapedKey() throws(JSONParseError) -> Key {
        switch try readEscapedStringBytes() {
        case .input(let range):
            return Key(bytes: UnsafeBufferPointer(rebasing: bytes[range]), slack: bytes.count - range.upperBound)
        case .scratch:
            // Escaped keys are rare: each gets memory of its own that stays put until the parser is released.
            let copy = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: scratch.count)
            _ = copy.initialize(from: scratch)
            decodedKeys.append(copy)
            return Key(bytes: UnsafeBufferPointer(copy))
        }
    }

    /// Whether the innermost object already has `key`, which it may: compared with each of its keys, or, once it has
    /// more than ``linearKeyLimit``, looked up in its set (``keySets``).
    @inline(never)
    private mutating func isRepeated(_ key: Key) -> Bool {
        let first = top.firstKey
        if top.keysInSet { return keySets[depth, default: []].insert(Array(key.bytes)).inserted == false }
        // Indexed rather than sliced: a slice of `keys` would retain and release its storage at every key.
        var index = first
        while index < keyCount, keys[index] != key { index += 1 }
        let repeated = index < keyCount
        if !repeated && keyCount - first >= Self.linearKeyLimit {
            keySets[depth] = Set((first..<keyCount).map { Array(keys[$0].bytes) } + [Array(key.bytes)])
            top.keysInSet = true
        }
        return repeated
    }

    @inline(never)
    private func duplicateKey(at offset: Int) -> JSONParseError {
        error(at: offset, "duplicate key \(JSONValue.string(currentKeyString).serializedString)")
    }

    @inline(never)
    private func missingColon() -> JSONParseError {
        unexpected("expected ':' after object key")
    }

    /// Frees the keys decoded from escapes and gives the stacks back for the next parse; the parser must not be used
    /// after.
    mutating func release() {
        for copy in decodedKeys { copy.deallocate() }
        decodedKeys.removeAll()
        // Stacks that hostile nesting or a huge object grew are let go rather than kept.
        guard containers.capacity <= 64, keys.capacity <= 256, building.capacity <= 64 else { return }
        var stacks = Stacks(containers: containers, keys: keys)
        swap(&stacks.building, &building)
        Self.spareStacks.withLock { spare in
            if spare.count < Self.spareStackLimit { spare.append(stacks) }
        }
    }

    /// Consumes a `,`, and names a trailing comma as such when `closing` follows it.
    @inline(__always)
    private mutating func consumeSeparator(closing: UInt8) throws(JSONParseError) -> Bool {
        guard consume(UInt8(ascii: ",")) else { return false }
        skipWhitespace()
        if position < bytes.count, bytes[position] == closing { throw trailingComma(closing: closing) }
        return true
    }

    @inline(never)
    private func trailingComma(closing: UInt8) -> JSONParseError {
        let expected = closing == UInt8(ascii: "}") ? "a string key" : "a JSON value"
        let bracket = Character(Unicode.Scalar(closing))
        return error(at: position, "expected \(expected) after ',', found '\(bracket)' (JSON allows no trailing comma)")
    }

    /// Reads `literal` (`true`, `false` or `null`: four or five bytes) at `position`, compared as a word and a byte.
    @inline(__always)
    mutating func expectLiteral(_ literal: StaticString) throws(JSONParseError) {
        let length = literal.utf8CodeUnitCount
        assert(length >= 4, "a JSON literal is four or five bytes")
        guard bytes.count &- position >= length, let base = bytes.baseAddress else { throw notAValue() }
        // The last four bytes as one word, and the first (for a four-byte literal, the same one again).
        let last = length &- 4
        let word = UnsafeRawPointer(base + position + last).loadUnaligned(as: UInt32.self)
        let expected = UnsafeRawPointer(literal.utf8Start + last).loadUnaligned(as: UInt32.self)
        guard word == expected, base[position] == literal.utf8Start[0] else { throw notAValue() }
        position &+= length
    }

    @inline(never)
    func notAValue() -> JSONParseError {
        unexpected("expected a JSON value")
    }

    @inline(__always)
    mutating func skipWhitespace() {
        while position < bytes.count {
            // Most values and separators follow with no whitespace between: every byte that is some is below 0x21.
            if bytes[position] > UInt8(ascii: " ") { return }
            switch bytes[position] {
            case UInt8(ascii: " "), .lineFeed, .carriageReturn, UInt8(ascii: "\t"): position += 1
            default: return
            }
        }
    }
}
