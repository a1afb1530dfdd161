extension JSONValue {
    /// Compact UTF-8 JSON: no whitespace, object members in their stored order.
    ///
    /// Strings escape `"`, `\` and the control characters U+0000–U+001F and leave everything else,
    /// non-ASCII included, as UTF-8. Whole numbers below 2^53 print without a fraction (`3`, `-0`);
    /// other numbers print in the shortest form that parses back to the same `Double`. JSON has no
    /// infinity or NaN, so those print as `null`, as JavaScript's `JSON.stringify` does.
    public func serialized() -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(64)
        write(to: &output)
        return output
    }

    /// The compact serialization as text.
    public var serializedString: String { String(decoding: serialized(), as: UTF8.self) }

    /// Appends the compact serialization to `output`, so a caller can build a body in a buffer it reuses.
    public func write(to output: inout [UInt8]) {
        switch self {
        case .null:
            output.append(contentsOf: "null".utf8)
        case .bool(let bool):
            output.append(contentsOf: bool ? "true".utf8 : "false".utf8)
        case .number(let number):
            Self.writeNumber(number, to: &output)
        case .string(let string):
            Self.writeString(string, to: &output)
        case .array(let elements):
            output.append(UInt8(ascii: "["))
            for (index, element) in elements.enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                element.write(to: &output)
            }
            output.append(UInt8(ascii: "]"))
        case .object(let object):
            output.append(UInt8(ascii: "{"))
            var first = true
            for (key, value) in object {
                if !first { output.append(UInt8(ascii: ",")) }
                first = false
                Self.writeString(key, to: &output)
                output.append(UInt8(ascii: ":"))
                value.write(to: &output)
            }
            output.append(UInt8(ascii: "}"))
        }
    }

    private static func writeNumber(_ number: Double, to output: inout [UInt8]) {
        guard number.isFinite else {
            output.append(contentsOf: "null".utf8)
            return
        }
        guard number.magnitude < 9_007_199_254_740_992, number == number.rounded(.towardZero) else {
            output.append(contentsOf: number.description.utf8)
            return
        }
        // Printed by hand: integers are the common case and `description` would add ".0".
        if number.sign == .minus { output.append(UInt8(ascii: "-")) }
        var remaining = UInt64(number.magnitude)
        let start = output.count
        repeat {
            output.append(UInt8(ascii: "0") + UInt8(remaining % 10))
            remaining /= 10
        } while remaining > 0
        output[start...].reverse()
    }

    private static func writeString(_ string: String, to output: inout [UInt8]) {
        output.append(.quote)
        appendEscaped(string, to: &output)
        output.append(.quote)
    }

    /// Appends `string` as it reads inside a serialized JSON string, without the quotes: for a caller that fills a
    /// serialized template with strings, byte for byte what serializing them in place would have written.
    public static func appendEscaped(_ string: String, to output: inout [UInt8]) {
        var string = string
        string.withUTF8 { bytes in
            // Copy runs that need no escaping in one go, found eight bytes at a time; most strings are a single run.
            var runStart = 0
            while case let index = JSONParser.endOfPlainRun(from: runStart, in: bytes, nonASCII: false), index < bytes.count {
                let byte = bytes[index]
                output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<index]))
                runStart = index + 1
                output.append(.backslash)
                switch byte {
                case .quote, .backslash: output.append(byte)
                case 0x08: output.append(UInt8(ascii: "b"))
                case 0x0C: output.append(UInt8(ascii: "f"))
                case .lineFeed: output.append(UInt8(ascii: "n"))
                case .carriageReturn: output.append(UInt8(ascii: "r"))
                case UInt8(ascii: "\t"): output.append(UInt8(ascii: "t"))
                default:
                    // Only 0x00–0x1F get here, so the high nibble is 0 or 1.
                    let low = byte & 0x0F
                    output.append(contentsOf: "u00".utf8)
                    output.append(UInt8(ascii: "0") + byte >> 4)
                    output.append(low < 10 ? UInt8(ascii: "0") + low : UInt8(ascii: "a") + low - 10)
                }
            }
            output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart...]))
        }
    }
}
