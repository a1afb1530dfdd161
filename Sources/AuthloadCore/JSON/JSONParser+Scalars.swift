extension JSONParser {
    /// Where a decoded string's bytes are: still in the input, or unescaped into ``scratch``.
    enum StringBytes {
        case input(Range<Int>)
        case scratch
    }

    /// Decodes the string whose opening quote is at `position`.
    mutating func readString() throws(JSONParseError) -> String {
        switch try readStringBytes() {
        case .input(let range): Self.string(UnsafeBufferPointer(rebasing: bytes[range]))
        case .scratch: String(decoding: scratch, as: UTF8.self)
        }
    }

    /// Decodes the string whose opening quote is at `position`, as the one of `known` it equals when there is one.
    mutating func readString(known: JSONKnownStrings) throws(JSONParseError) -> String {
        switch try readStringBytes() {
        case .input(let range):
            let decoded = UnsafeBufferPointer(rebasing: bytes[range])
            return known.string(equalTo: decoded) ?? Self.string(decoded)
        case .scratch:
            return scratch.withUnsafeBufferPointer { decoded in
                known.string(equalTo: decoded) ?? String(decoding: decoded, as: UTF8.self)
            }
        }
    }

    /// The text of `utf8`, which the parser has checked is well-formed UTF-8 (so nothing is repaired): written into
    /// the string's own storage, where `String(decoding:as:)` went through its repairing path for every string.
    @inline(__always)
    static func string(_ utf8: UnsafeBufferPointer<UInt8>) -> String {
        String(unsafeUninitializedCapacity: utf8.count) { buffer in
            _ = buffer.initialize(fromContentsOf: utf8)
            return utf8.count
        }
    }

    /// Validates the string whose opening quote is at `position` and says where its decoded bytes are.
    ///
    /// A string without escapes stays in the input; only escapes send the text through ``scratch``.
    ///
    /// Inlined: most strings, keys above all, are plain ASCII, found whole by one scan for their closing quote in
    /// place; any other (an escape, a non-ASCII or control byte, no closing quote) is read again from its opening
    /// quote, byte by byte, by ``readEscapedStringBytes()``, so that it fails exactly as it would have.
    @inline(__always)
    mutating func readStringBytes() throws(JSONParseError) -> StringBytes {
        let end = Self.endOfPlainRun(from: position + 1, in: bytes)
        guard end < bytes.count, bytes[end] == .quote else { return try readEscapedStringBytes() }
        defer { position = end + 1 }
        return .input(position + 1..<end)
    }

    /// Validates the string whose opening quote is at `position` and says where its decoded bytes are, escapes and
    /// non-ASCII text included. UTF-8 is validated here rather than left to `String(decoding:)`, which would
    /// silently repair it, so that an error can name the offending byte.
    @inline(never)
    mutating func readEscapedStringBytes() throws(JSONParseError) -> StringBytes {
        let opening = position
        position += 1
        var runStart = position
        var unescaped = true
        while true {
            position = Self.endOfPlainRun(from: position, in: bytes)
            guard position < bytes.count else { throw unterminatedString(opening) }
            let byte = bytes[position]
            switch byte {
            case .quote:
                let run = runStart..<position
                position += 1
                if unescaped { return .input(run) }
                scratch.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[run]))
                return .scratch
            case .backslash:
                if unescaped { scratch.removeAll(keepingCapacity: true) }
                scratch.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<position]))
                unescaped = false
                try readEscape(opening: opening)
                runStart = position
            case 0x80...:
                guard let length = Self.utf8SequenceLength(at: position, in: bytes) else {
                    let hex = JSONParseError.hex(UInt32(byte), digits: 2, prefix: "0x")
                    throw error(at: position, "invalid UTF-8 sequence starting with byte \(hex) at byte offset \(position)")
                }
                position += length
            default:
                let codePoint = JSONParseError.codePoint(UInt32(byte))
                throw error(at: position, "unescaped control character \(codePoint) in string at byte offset \(position)")
            }
        }
    }

    /// The index of the first byte from `start` on that a string cannot take as is: a quote,
    /// backslash, control character or (when `nonASCII`, as the parser validates it) non-ASCII byte; or the
    /// end of the input. The serializer stops at the bytes it escapes.
    ///
    /// Tokens and identifiers in bodies are long runs of plain ASCII, so this tests eight bytes
    /// per step with SWAR bit tricks; only the input's last few bytes go one at a time.
    static func endOfPlainRun(from start: Int, in bytes: UnsafeBufferPointer<UInt8>, nonASCII: Bool = true) -> Int {
        var index = start
        if let base = UnsafeRawPointer(bytes.baseAddress) {
            // Wrapping arithmetic: `index` stays within the buffer, so no overflow check is needed in the loop.
            while bytes.count &- index >= 8 {
                let word = UInt64(littleEndian: base.loadUnaligned(fromByteOffset: index, as: UInt64.self))
                let special = specialBytes(in: word, nonASCII: nonASCII)
                // The lowest flagged byte is exact (borrows only run upward, from bytes flagged themselves), so a
                // short string, a key, ends here without a byte-by-byte scan.
                if special != 0 { return index &+ special.trailingZeroBitCount &>> 3 }
                index &+= 8
            }
        }
        while index < bytes.count {
            let byte = bytes[index]
            if byte < 0x20 || (nonASCII && byte >= 0x80) || byte == .quote || byte == .backslash { break }
            index += 1
        }
        return index
    }

    /// The high bit of each byte of `word` (eight bytes, the first the lowest) that is a quote, backslash, control
    /// character or (when `nonASCII`) non-ASCII byte; the lowest set is exact, bits above it may be spurious.
    @inline(__always)
    static func specialBytes(in word: UInt64, nonASCII: Bool = true) -> UInt64 {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let quotes = word ^ (ones &* 0x22)
        let backslashes = word ^ (ones &* 0x5C)
        // `(x - 0x01…) & ~x` sets a byte's high bit when that byte of x is zero (here: equal to the probe);
        // `(word - 0x20…) & ~word` does the same for bytes below 0x20.
        let special =
            ((quotes &- ones) & ~quotes) | ((backslashes &- ones) & ~backslashes) | ((word &- ones &* 0x20) & ~word)
            | (nonASCII ? word : 0)
        return special & 0x8080_8080_8080_8080
    }

    private func unterminatedString(_ opening: Int) -> JSONParseError {
        error(at: opening, "unterminated string: no closing '\"' before end of input")
    }

    /// Decodes the escape at `position` (its backslash) into ``scratch``.
    private mutating func readEscape(opening: Int) throws(JSONParseError) {
        let backslash = position
        guard position + 1 < bytes.count else { throw unterminatedString(opening) }
        let decoded: UInt8
        switch bytes[position + 1] {
        case .quote: decoded = .quote
        case .backslash: decoded = .backslash
        case UInt8(ascii: "/"): decoded = UInt8(ascii: "/")
        case UInt8(ascii: "b"): decoded = 0x08
        case UInt8(ascii: "f"): decoded = 0x0C
        case UInt8(ascii: "n"): decoded = .lineFeed
        case UInt8(ascii: "r"): decoded = .carriageReturn
        case UInt8(ascii: "t"): decoded = UInt8(ascii: "\t")
        case UInt8(ascii: "u"):
            position += 2
            let unit = try readHexQuad()
            var scalar = unit
            switch unit {
            case 0xD800...0xDBFF:
                // A high surrogate counts only as the first half of a `\uXXXX\uXXXX` pair.
                guard bytes.count - position >= 6, bytes[position] == .backslash, bytes[position + 1] == UInt8(ascii: "u"),
                    let low = Self.hexQuad(at: position + 2, in: bytes), (0xDC00...0xDFFF).contains(low)
                else { throw unpairedSurrogate(unit, at: backslash) }
                scalar = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00)
                position += 6
            case 0xDC00...0xDFFF:
                throw unpairedSurrogate(unit, at: backslash)
            default:
                break
            }
            appendUTF8(scalar)
            return
        default:
            throw unexpected("expected an escape character (one of \"\\/bfnrtu) after '\\'", at: position + 1)
        }
        scratch.append(decoded)
        position += 2
    }

    /// Reads the four hex digits of a `\u` escape, pointing an error at the first one that is missing.
    private mutating func readHexQuad() throws(JSONParseError) -> UInt32 {
        if let unit = Self.hexQuad(at: position, in: bytes) {
            position += 4
            return unit
        }
        var offset = position
        while offset < bytes.count, Self.hexDigit(bytes[offset]) != nil { offset += 1 }
        throw unexpected("expected four hex digits after '\\u'", at: offset)
    }

    private func unpairedSurrogate(_ unit: UInt32, at offset: Int) -> JSONParseError {
        let escape = JSONParseError.hex(unit, digits: 4, prefix: "\\u")
        return error(at: offset, "unpaired surrogate \(escape) in string (a lone half of a UTF-16 pair is not a character)")
    }

    private static func hexQuad(at offset: Int, in bytes: UnsafeBufferPointer<UInt8>) -> UInt32? {
        guard bytes.count - offset >= 4 else { return nil }
        var value: UInt32 = 0
        for index in offset..<offset + 4 {
            guard let digit = hexDigit(bytes[index]) else { return nil }
            value = value << 4 | digit
        }
        return value
    }

    private static func hexDigit(_ byte: UInt8) -> UInt32? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): UInt32(byte - UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "f"): UInt32(byte - UInt8(ascii: "a") + 10)
        case UInt8(ascii: "A")...UInt8(ascii: "F"): UInt32(byte - UInt8(ascii: "A") + 10)
        default: nil
        }
    }

    private mutating func appendUTF8(_ scalar: UInt32) {
        switch scalar {
        case ..<0x80:
            scratch.append(UInt8(scalar))
        case ..<0x800:
            scratch.append(UInt8(0xC0 | scalar >> 6))
            scratch.append(UInt8(0x80 | scalar & 0x3F))
        case ..<0x10000:
            scratch.append(UInt8(0xE0 | scalar >> 12))
            scratch.append(UInt8(0x80 | scalar >> 6 & 0x3F))
            scratch.append(UInt8(0x80 | scalar & 0x3F))
        default:
            scratch.append(UInt8(0xF0 | scalar >> 18))
            scratch.append(UInt8(0x80 | scalar >> 12 & 0x3F))
            scratch.append(UInt8(0x80 | scalar >> 6 & 0x3F))
            scratch.append(UInt8(0x80 | scalar & 0x3F))
        }
    }

    /// The length of the well-formed UTF-8 sequence at `offset`, or nil for anything the Unicode
    /// standard rejects: stray continuation bytes, overlong forms, surrogates, and values past U+10FFFF.
    static func utf8SequenceLength(at offset: Int, in bytes: UnsafeBufferPointer<UInt8>) -> Int? {
        let length: Int
        let second: ClosedRange<UInt8>
        switch bytes[offset] {
        case 0x00...0x7F: return 1
        case 0xC2...0xDF: (length, second) = (2, 0x80...0xBF)
        case 0xE0: (length, second) = (3, 0xA0...0xBF)
        case 0xE1...0xEC, 0xEE...0xEF: (length, second) = (3, 0x80...0xBF)
        case 0xED: (length, second) = (3, 0x80...0x9F)
        case 0xF0: (length, second) = (4, 0x90...0xBF)
        case 0xF1...0xF3: (length, second) = (4, 0x80...0xBF)
        case 0xF4: (length, second) = (4, 0x80...0x8F)
        default: return nil
        }
        guard bytes.count - offset >= length, second.contains(bytes[offset + 1]) else { return nil }
        for index in offset + 2..<offset + length where bytes[index] & 0xC0 != 0x80 { return nil }
        return length
    }

    /// Reads the number at `position` to the nearest `Double`.
    ///
    /// Up to 19 significant digits with a small exponent convert exactly here (one correctly rounded
    /// multiply or divide by an exact power of ten); anything else goes to the standard library's
    /// correctly rounded text conversion.
    mutating func readNumber() throws(JSONParseError) -> Double {
        let start = position
        let negative = consume(UInt8(ascii: "-"))
        guard let first = digit() else { throw unexpected("expected a digit after '-'") }
        var significand: UInt64 = 0
        var significantDigits = 0
        var exponent = 0
        var exact = true

        func accumulate(_ digit: UInt8, fraction: Bool) {
            guard significantDigits < 19 else {
                exact = false
                return
            }
            significand = significand * 10 + UInt64(digit)
            if significand != 0 { significantDigits += 1 }
            if fraction { exponent -= 1 }
        }

        position += 1
        if first == 0 {
            if digit() != nil { throw error(at: start, "numbers must not start with a leading zero") }
        } else {
            accumulate(first, fraction: false)
            while let next = digit() {
                accumulate(next, fraction: false)
                position += 1
            }
        }
        if consume(UInt8(ascii: ".")) {
            guard digit() != nil else { throw unexpected("expected a digit after '.'") }
            while let next = digit() {
                accumulate(next, fraction: true)
                position += 1
            }
        }
        if position < bytes.count, bytes[position] | 0x20 == UInt8(ascii: "e") {
            position += 1
            let negativeExponent = consume(UInt8(ascii: "-"))
            if !negativeExponent { _ = consume(UInt8(ascii: "+")) }
            guard digit() != nil else { throw unexpected("expected a digit in the exponent") }
            var written = 0
            while let next = digit() {
                // Past any exponent a Double can use; capping keeps absurdly long exponents from overflowing.
                if written < 1_000_000 { written = written * 10 + Int(next) }
                position += 1
            }
            exponent += negativeExponent ? -written : written
        }

        if significand == 0 {
            return negative ? -0.0 : 0.0
        }
        if exact, significand <= 1 << 53, (-22...22).contains(exponent) {
            var value = Double(significand)
            if exponent > 0 { value *= Self.powersOfTen[exponent] }
            if exponent < 0 { value /= Self.powersOfTen[-exponent] }
            return negative ? -value : value
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<position]), as: UTF8.self)
        guard let value = Double(text), value.isFinite else {
            let shown = text.count > 40 ? String(text.prefix(40)) + "…" : text
            throw error(at: start, "number \(shown) is too large for a 64-bit floating-point value")
        }
        return value
    }

    private static let powersOfTen: [Double] = [
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
        1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22
    ]

    private func digit() -> UInt8? {
        guard position < bytes.count else { return nil }
        let value = bytes[position] &- UInt8(ascii: "0")
        return value < 10 ? value : nil
    }
}
