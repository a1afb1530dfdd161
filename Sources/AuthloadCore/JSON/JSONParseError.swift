/// Where input stops being valid JSON and why, precise enough to fix a hand-edited file.
///
/// Lines and columns start at 1. A line ends at `\n`, `\r\n` or a lone `\r`. Columns count Unicode
/// scalars, not bytes: a tab or an `é` is one column (an emoji built from several scalars counts each).
///
/// ```
/// line 3, column 17: expected ',' or '}' after object member, found 'x'
/// ```
public struct JSONParseError: Error, Sendable, CustomStringConvertible, Equatable {
    public var line: Int
    public var column: Int
    /// Bytes from the start of the input to the offending byte; a leading byte-order mark counts.
    public var byteOffset: Int
    /// What is wrong, without the position, e.g. `expected ':' after object key, found '='`.
    public var message: String

    public init(line: Int, column: Int, byteOffset: Int, message: String) {
        self.line = line
        self.column = column
        self.byteOffset = byteOffset
        self.message = message
    }

    public var description: String { "line \(line), column \(column): \(message)" }
}

extension JSONParseError {
    /// Works the line and column out only once an error is thrown, so the parser never tracks them.
    init(at offset: Int, in bytes: UnsafeBufferPointer<UInt8>, _ message: String) {
        let end = min(offset, bytes.count)
        var line = 1
        var column = 1
        var index = min(JSONParser.byteOrderMarkLength(bytes), end)
        while index < end {
            let byte = bytes[index]
            if byte == .lineFeed {
                line += 1
                column = 1
            } else if byte == .carriageReturn {
                // In `\r\n` the `\n` ends the line.
                if index + 1 >= bytes.count || bytes[index + 1] != .lineFeed {
                    line += 1
                    column = 1
                }
            } else if byte & 0xC0 != 0x80 {
                column += 1
            }
            index += 1
        }
        self.init(line: line, column: column, byteOffset: offset, message: message)
    }

    /// Names what stands at `offset` for a "found …" clause: a quoted character or word,
    /// `end of input`, or the code point or byte when it would be invisible or is not UTF-8.
    static func found(at offset: Int, in bytes: UnsafeBufferPointer<UInt8>) -> String {
        guard offset < bytes.count else { return "end of input" }
        let byte = bytes[offset]
        switch byte {
        case UInt8(ascii: "'"):
            return "a single quote (JSON strings use double quotes)"
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"):
            // A whole word reads better than its first letter: `found 'True'`, `found 'NaN'`.
            var end = offset
            while end < bytes.count, end - offset < 16, bytes[end].isLetter { end += 1 }
            let word = String(decoding: UnsafeBufferPointer(rebasing: bytes[offset..<end]), as: UTF8.self)
            return end < bytes.count && bytes[end].isLetter ? "'\(word)…'" : "'\(word)'"
        case 0x21...0x7E:
            return "'\(Character(Unicode.Scalar(byte)))'"
        case 0x20:
            return "a space"
        case 0x00..<0x20, 0x7F:
            return "control character \(codePoint(UInt32(byte)))"
        default:
            guard let length = JSONParser.utf8SequenceLength(at: offset, in: bytes) else {
                return "invalid UTF-8 byte \(hex(UInt32(byte), digits: 2, prefix: "0x"))"
            }
            let scalar = String(decoding: UnsafeBufferPointer(rebasing: bytes[offset..<offset + length]), as: UTF8.self)
            return "'\(scalar)' (\(codePoint(scalar.unicodeScalars.first!.value)))"
        }
    }

    static func codePoint(_ value: UInt32) -> String { hex(value, digits: 4, prefix: "U+") }

    static func hex(_ value: UInt32, digits: Int, prefix: String) -> String {
        let text = String(value, radix: 16, uppercase: true)
        return prefix + String(repeating: "0", count: max(0, digits - text.count)) + text
    }
}

extension UInt8 {
    // Computed rather than stored, so they fold to constants instead of loading a global.
    static var quote: UInt8 { 0x22 }
    static var backslash: UInt8 { 0x5C }
    static var lineFeed: UInt8 { 0x0A }
    static var carriageReturn: UInt8 { 0x0D }

    fileprivate var isLetter: Bool {
        switch self {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"): true
        default:
            false
        }
    }
}
