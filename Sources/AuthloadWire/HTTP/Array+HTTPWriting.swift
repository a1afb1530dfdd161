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
        var token = token
        token.withUTF8 { appendToken(UnsafeRawBufferPointer($0)) }
    }

    /// Appends a field name from bytes, replacing bytes as the `String` form does.
    mutating func appendToken(_ token: UnsafeRawBufferPointer) {
        if token.allSatisfy(ASCII.isTokenChar) {
            appendBytes(token)
        } else {
            for byte in token { append(ASCII.isTokenChar(byte) ? byte : UInt8(ascii: "-")) }
        }
    }

    /// Appends a field value or reason phrase; control bytes (CR and LF above all) become spaces.
    mutating func appendFieldText(_ text: String) {
        var text = text
        text.withUTF8 { appendFieldText(UnsafeRawBufferPointer($0)) }
    }

    /// Appends a field value from bytes, replacing bytes as the `String` form does.
    mutating func appendFieldText(_ text: UnsafeRawBufferPointer) {
        if ASCII.allFieldValueBytes(text) {
            appendBytes(text)
        } else {
            for byte in text { append(ASCII.isFieldValueChar(byte) ? byte : ASCII.space) }
        }
    }

    /// Appends raw bytes with one bulk copy: rebinding gives the typed buffer whose copy is a memcpy.
    private mutating func appendBytes(_ bytes: UnsafeRawBufferPointer) {
        bytes.withMemoryRebound(to: UInt8.self) { append(contentsOf: $0) }
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

    /// Appends a field straight from the bytes ``HTTPHeaders`` keeps, sanitised as the `String` form is.
    mutating func appendField(name: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) {
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
