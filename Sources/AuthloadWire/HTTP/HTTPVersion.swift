/// The `HTTP-version` token shared by status and request lines.
enum HTTPVersion {
    /// The minor version of `HTTP/1.x`; other majors are unsupported, anything else is malformed.
    static func minor(
        _ bytes: [UInt8],
        _ token: Range<Int>,
        at offset: Int,
        in line: HTTPParseError.StartLine
    ) throws(HTTPParseError) -> Int {
        let prefix: StaticString = "HTTP/"
        let hasPrefix =
            token.count >= 5
            && prefix.withUTF8Buffer { expected in
                bytes[token.lowerBound..<token.lowerBound + 5].elementsEqual(expected)
            }
        guard hasPrefix, token.count > 5, ASCII.isDigit(bytes[token.lowerBound + 5]) else {
            throw .startLine(line, at: offset, expected: "'HTTP/1.x'")
        }
        let major = bytes[token.lowerBound + 5]
        guard major == UInt8(ascii: "1") else {
            throw .unsupportedVersion(bytes[token], at: offset)
        }
        guard token.count == 8, bytes[token.lowerBound + 6] == UInt8(ascii: "."), ASCII.isDigit(bytes[token.lowerBound + 7]) else {
            throw .startLine(line, at: offset, expected: "'HTTP/1.x'")
        }
        // RFC 9110 §6.2: a higher minor version is handled as the highest one we know, 1.1.
        return bytes[token.lowerBound + 7] == UInt8(ascii: "0") ? 0 : 1
    }
}
