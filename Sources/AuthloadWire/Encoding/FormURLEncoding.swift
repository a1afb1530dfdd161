/// Encodes and decodes `application/x-www-form-urlencoded` bodies and query strings.
///
/// Encoding percent-encodes everything outside the RFC 3986 unreserved set, spaces included (`%20`),
/// which every form decoder accepts. Decoding also reads `+` as a space, as browsers send it.
///
/// ```swift
/// let body = FormURLEncoding.encode([("username", "ana@example.com"), ("password", secret)])
/// // username=ana%40example.com&password=…
/// let fields = FormURLEncoding.decode(request.body)
/// ```
public enum FormURLEncoding {
    /// Returns `name=value` pairs joined by `&`, in order; duplicate names are kept.
    public static func encode(_ pairs: [(String, String)]) -> [UInt8] {
        var bytes: [UInt8] = []
        encode(pairs, into: &bytes)
        return bytes
    }

    /// Appends the encoded pairs to `bytes`, e.g. straight after `?` in a target being built.
    public static func encode(_ pairs: [(String, String)], into bytes: inout [UInt8]) {
        bytes.reserveCapacity(bytes.count + pairs.reduce(0) { $0 + $1.0.utf8.count + $1.1.utf8.count + 2 })
        for (index, (name, value)) in pairs.enumerated() {
            if index > 0 { bytes.append(ASCII.ampersand) }
            PercentEncoding.append(encoding: name, to: &bytes)
            bytes.append(ASCII.equals)
            PercentEncoding.append(encoding: value, to: &bytes)
        }
    }

    /// Returns the encoded pairs as text, for a query string.
    public static func encodedString(_ pairs: [(String, String)]) -> String {
        String(decoding: encode(pairs), as: UTF8.self)
    }

    /// Splits a form body into its pairs, in order.
    ///
    /// Empty pieces (`a=1&&b=2`) are skipped, a piece without `=` is a name with an empty value,
    /// and malformed escapes are kept as they are, so decoding never fails.
    public static func decode(_ bytes: [UInt8]) -> [(String, String)] {
        var pairs: [(String, String)] = []
        var start = 0
        for end in 0...bytes.count where end == bytes.count || bytes[end] == ASCII.ampersand {
            defer { start = end + 1 }
            guard end > start else { continue }
            let equals = bytes[start..<end].firstIndex(of: ASCII.equals) ?? end
            let name = PercentEncoding.decodedBytes(bytes, start..<equals, plusAsSpace: true)
            let value = PercentEncoding.decodedBytes(bytes, min(equals + 1, end)..<end, plusAsSpace: true)
            pairs.append((String(decoding: name, as: UTF8.self), String(decoding: value, as: UTF8.self)))
        }
        return pairs
    }

    /// The value of the first pair named `name`, decoded, as `decode(bytes).first { $0.0 == name }?.1` finds it, but
    /// with only that value made: a server that reads a few fields of a form need not make a string of every name
    /// and value in it.
    public static func firstValue(named name: String, in bytes: [UInt8]) -> String? {
        var start = 0
        for end in 0...bytes.count where end == bytes.count || bytes[end] == ASCII.ampersand {
            defer { start = end + 1 }
            guard end > start else { continue }
            let equals = bytes[start..<end].firstIndex(of: ASCII.equals) ?? end
            guard pieceName(bytes, start..<equals, is: name) else { continue }
            let value = PercentEncoding.decodedBytes(bytes, min(equals + 1, end)..<end, plusAsSpace: true)
            return String(decoding: value, as: UTF8.self)
        }
        return nil
    }

    /// Whether the encoded name in `range` decodes to `name`: compared byte for byte when it is plain ASCII, which is
    /// what a string of it would compare as, else decoded and compared as strings.
    private static func pieceName(_ bytes: [UInt8], _ range: Range<Int>, is name: String) -> Bool {
        let plain = bytes[range].allSatisfy { $0 < 0x80 && $0 != ASCII.percent && $0 != ASCII.plus }
        guard plain else {
            return String(decoding: PercentEncoding.decodedBytes(bytes, range, plusAsSpace: true), as: UTF8.self) == name
        }
        return bytes[range].elementsEqual(name.utf8)
    }

    /// Splits a query string (without the `?`) into its pairs, in order.
    public static func decode(_ query: some StringProtocol) -> [(String, String)] {
        decode(Array(query.utf8))
    }
}
