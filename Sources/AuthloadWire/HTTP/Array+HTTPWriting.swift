/// Byte-level appends for the serializers: no intermediate strings, and nothing written that could split a message.
extension Array where Element == UInt8 {
    mutating func append(ascii text: StaticString) {
        text.withUTF8Buffer { append(contentsOf: $0) }
    }

    mutating func appendCRLF() {
        append(ASCII.cr)
        append(ASCII.lf)
    }

    mutating func appendDecimal(_ value: Int) {
        if value < 0 { append(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        var divisor: UInt = 1
        while magnitude / divisor >= 10 { divisor *= 10 }
        repeat {
            append(0x30 + UInt8(magnitude / divisor))
            magnitude %= divisor
            divisor /= 10
        } while divisor > 0
    }

    /// Appends a non-negative value in upper-case hexadecimal, as chunk sizes are written.
    mutating func appendHex(_ value: Int) {
        var shift = (Int.bitWidth - (value | 1).leadingZeroBitCount + 3) / 4 * 4
        repeat {
            shift -= 4
            append(ASCII.hexDigit(UInt8(truncatingIfNeeded: value >> shift) & 0xF))
        } while shift > 0
    }

    /// Appends a method or field name; bytes that are not `tchar` become `-` so a bad name cannot end the line.
    mutating func appendToken(_ token: String) {
        if ASCII.allBytes(of: token, ASCII.isTokenChar) {
            append(contentsOf: token.utf8)
        } else {
            for byte in token.utf8 { append(ASCII.isTokenChar(byte) ? byte : UInt8(ascii: "-")) }
        }
    }

    /// Appends a field value or reason phrase; control bytes (CR and LF above all) become spaces.
    mutating func appendFieldText(_ text: String) {
        let isClean =
            text.utf8.withContiguousStorageIfAvailable { ASCII.allFieldValueBytes(UnsafeRawBufferPointer($0)) }
            ?? ASCII.allBytes(of: text, ASCII.isFieldValueChar)
        if isClean {
            append(contentsOf: text.utf8)
        } else {
            for byte in text.utf8 { append(ASCII.isFieldValueChar(byte) ? byte : ASCII.space) }
        }
    }

    /// Appends a request target, percent-encoding spaces, controls and non-ASCII bytes that would break the request line.
    mutating func appendTarget(_ target: String) {
        let isVisible = { (byte: UInt8) in byte > ASCII.space && byte < 0x7F }
        if ASCII.allBytes(of: target, isVisible) {
            append(contentsOf: target.utf8)
        } else {
            for byte in target.utf8 {
                if isVisible(byte) {
                    append(byte)
                } else {
                    append(ASCII.percent)
                    append(ASCII.hexDigit(byte >> 4))
                    append(ASCII.hexDigit(byte & 0xF))
                }
            }
        }
    }

    mutating func appendField(_ name: String, _ value: String) {
        appendToken(name)
        append(ASCII.colon)
        append(ASCII.space)
        appendFieldText(value)
        appendCRLF()
    }

    /// Appends `body` as one chunk plus the last chunk, or only the last chunk when it is empty.
    mutating func appendChunked(_ body: [UInt8]) {
        if !body.isEmpty {
            appendHex(body.count)
            appendCRLF()
            append(contentsOf: body)
            appendCRLF()
        }
        append(ascii: "0\r\n\r\n")
    }
}
