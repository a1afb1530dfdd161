/// Byte classes from RFC 9110 and RFC 3986, as inlined comparisons and bit masks rather than lookup tables.
enum ASCII {
    static let cr: UInt8 = 0x0D
    static let lf: UInt8 = 0x0A
    static let space: UInt8 = 0x20
    static let tab: UInt8 = 0x09
    static let colon: UInt8 = 0x3A
    static let semicolon: UInt8 = 0x3B
    static let comma: UInt8 = 0x2C
    static let percent: UInt8 = 0x25
    static let plus: UInt8 = 0x2B
    static let ampersand: UInt8 = 0x26
    static let equals: UInt8 = 0x3D

    @inline(__always)
    static func isDigit(_ byte: UInt8) -> Bool { byte &- 0x30 < 10 }

    @inline(__always)
    static func isWhitespace(_ byte: UInt8) -> Bool { byte == space || byte == tab }

    /// `tchar` from RFC 9110 §5.6.2: what methods, header names and transfer codings are made of.
    @inline(__always)
    static func isTokenChar(_ byte: UInt8) -> Bool {
        // A 128-bit membership mask: one shift and test instead of a jump table, as this runs per name byte.
        byte < 64
            ? (0x03FF_6CFA_0000_0000 as UInt64) >> byte & 1 != 0
            : byte < 128 && (0x57FF_FFFF_C7FF_FFFE as UInt64) >> (byte & 63) & 1 != 0
    }

    /// Field-value bytes (VCHAR, SP, HTAB, obs-text); every other control byte could split a message.
    @inline(__always)
    static func isFieldValueChar(_ byte: UInt8) -> Bool {
        byte >= 0x20 ? byte != 0x7F : byte == tab
    }

    /// RFC 3986 `unreserved`: the only bytes that never need percent-encoding.
    @inline(__always)
    static func isUnreserved(_ byte: UInt8) -> Bool {
        byte < 64
            ? (0x03FF_6000_0000_0000 as UInt64) >> byte & 1 != 0
            : byte < 128 && (0x47FF_FFFE_87FF_FFFE as UInt64) >> (byte & 63) & 1 != 0
    }

    @inline(__always)
    static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case 0x30...0x39: byte - 0x30
        case 0x41...0x46: byte - 0x41 + 10
        case 0x61...0x66: byte - 0x61 + 10
        default: nil
        }
    }

    @inline(__always)
    static func hexDigit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? 0x30 + nibble : 0x41 + nibble - 10
    }

    @inline(__always)
    static func lowercased(_ byte: UInt8) -> UInt8 {
        byte &- 0x41 < 26 ? byte | 0x20 : byte
    }

    /// Whether `bytes[range]` equals `lowercase` ignoring ASCII case; `lowercase` must be lower-case.
    static func equalsIgnoringCase(_ bytes: [UInt8], _ range: Range<Int>, _ lowercase: StaticString) -> Bool {
        guard range.count == lowercase.utf8CodeUnitCount else { return false }
        return lowercase.withUTF8Buffer { expected in
            var index = range.lowerBound
            for byte in expected {
                guard lowercased(bytes[index]) == byte else { return false }
                index += 1
            }
            return true
        }
    }

    /// `range` without leading and trailing spaces and tabs (RFC 9110 OWS).
    static func trimmingWhitespace(_ bytes: [UInt8], _ range: Range<Int>) -> Range<Int> {
        var lower = range.lowerBound
        var upper = range.upperBound
        while lower < upper, isWhitespace(bytes[lower]) { lower += 1 }
        while upper > lower, isWhitespace(bytes[upper - 1]) { upper -= 1 }
        return lower..<upper
    }

    /// Calls `body` with each non-empty, trimmed element of a comma-separated list (RFC 9110 §5.6.1).
    static func forEachListElement<E: Error>(_ bytes: [UInt8], _ range: Range<Int>, _ body: (Range<Int>) throws(E) -> Void) throws(E) {
        var start = range.lowerBound
        var index = range.lowerBound
        while index <= range.upperBound {
            if index == range.upperBound || bytes[index] == comma {
                let element = trimmingWhitespace(bytes, start..<index)
                if !element.isEmpty { try body(element) }
                start = index + 1
            }
            index += 1
        }
    }

    // Scans over raw pointers: these loops see every byte of every head, and Array indexing would
    // bounds-check each one. Callers pass ranges inside `bytes`.

    /// The first index in `range` whose byte fails `isMember`, or `range.upperBound`.
    @inline(__always)
    static func prefixEnd(_ bytes: [UInt8], _ range: Range<Int>, while isMember: (UInt8) -> Bool) -> Int {
        precondition(range.lowerBound >= 0 && range.upperBound <= bytes.count)
        return bytes.withUnsafeBufferPointer { pointer in
            var index = range.lowerBound
            while index < range.upperBound, isMember(pointer[index]) { index += 1 }
            return index
        }
    }

    /// The index of the first LF at or after `start`, eight bytes at a time.
    static func firstLineFeed(_ bytes: [UInt8], from start: Int) -> Int? {
        precondition(start >= 0 && start <= bytes.count)
        return bytes.withUnsafeBytes { raw in
            var index = start
            let lineFeeds: UInt64 = 0x0A0A_0A0A_0A0A_0A0A
            while index + 8 <= raw.count {
                let word = raw.loadUnaligned(fromByteOffset: index, as: UInt64.self) ^ lineFeeds
                // Classic has-zero-byte test: nonzero exactly when some byte of `word` is 0, i.e. was LF.
                if (word &- 0x0101_0101_0101_0101) & ~word & 0x8080_8080_8080_8080 != 0 { break }
                index += 8
            }
            while index < raw.count {
                if raw[index] == lf { return index }
                index += 1
            }
            return nil
        }
    }

    /// Whether every byte is a field-value byte, eight at a time: values rarely hold a control byte,
    /// and a tab only costs the byte-wise path.
    static func allFieldValueBytes(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var index = 0
        while index + 8 <= bytes.count {
            let word = bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self)
            let below20 = (word &- 0x2020_2020_2020_2020) & ~word & 0x8080_8080_8080_8080
            let del = word ^ 0x7F7F_7F7F_7F7F_7F7F
            let isDelete = (del &- 0x0101_0101_0101_0101) & ~del & 0x8080_8080_8080_8080
            if below20 | isDelete != 0 { break }
            index += 8
        }
        while index < bytes.count {
            guard isFieldValueChar(bytes[index]) else { return false }
            index += 1
        }
        return true
    }

    static func allFieldValueBytes(_ bytes: [UInt8], _ range: Range<Int>) -> Bool {
        precondition(range.lowerBound >= 0 && range.upperBound <= bytes.count)
        return bytes.withUnsafeBytes { allFieldValueBytes(UnsafeRawBufferPointer(rebasing: $0[range])) }
    }

    /// Whether every UTF-8 byte of `text` passes `predicate`, over contiguous storage when the string has it.
    @inline(__always)
    static func allBytes(of text: String, _ predicate: (UInt8) -> Bool) -> Bool {
        text.utf8.withContiguousStorageIfAvailable { $0.allSatisfy(predicate) } ?? text.utf8.allSatisfy(predicate)
    }

    /// Whether `bytes` equal `lowercase` ignoring ASCII case; `lowercase` must be lower-case.
    static func equalsIgnoringCase(_ bytes: UnsafeRawBufferPointer, _ lowercase: StaticString) -> Bool {
        guard bytes.count == lowercase.utf8CodeUnitCount else { return false }
        return lowercase.withUTF8Buffer { expected in
            zip(bytes, expected).allSatisfy { lowercased($0) == $1 }
        }
    }
}
