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
        bytes.withUnsafeBufferPointer { decode($0) }
    }

    /// ``decode(_:)-([UInt8])`` of bytes read in place, e.g. the query in a request's target.
    ///
    /// The pairs are counted first (a service reads a query's or form's few pairs at every request, and the array grew
    /// at the first, second and fourth), and a name or value with nothing escaped is made a string straight from its
    /// bytes.
    public static func decode(_ bytes: UnsafeBufferPointer<UInt8>) -> [(String, String)] {
        var pairs: [(String, String)] = []
        pairs.reserveCapacity(bytes.reduce(1) { $1 == ASCII.ampersand ? $0 + 1 : $0 })
        var start = 0
        for end in 0...bytes.count where end == bytes.count || bytes[end] == ASCII.ampersand {
            defer { start = end + 1 }
            guard end > start else { continue }
            let equals = bytes[start..<end].firstIndex(of: ASCII.equals) ?? end
            let name = PercentEncoding.decodedString(UnsafeBufferPointer(rebasing: bytes[start..<equals]), plusAsSpace: true)
            let value = PercentEncoding.decodedString(
                UnsafeBufferPointer(rebasing: bytes[min(equals + 1, end)..<end]), plusAsSpace: true)
            pairs.append((name, value))
        }
        return pairs
    }

    /// The value of the first pair named `name`, decoded, as `decode(bytes).first { $0.0 == name }?.1` finds it, but
    /// with only that value made: a server that reads a few fields of a form need not make a string of every name
    /// and value in it.
    public static func firstValue(named name: String, in bytes: [UInt8]) -> String? {
        firstValues(named: [name], in: bytes)[0]
    }

    /// ``firstValue(named:in:)`` of each of `names`, in their order, found in one pass over the form: a server that
    /// reads three or four fields of each form it is sent walked it once for each.
    public static func firstValues(named names: [String], in bytes: [UInt8]) -> [String?] {
        var values = [String?](repeating: nil, count: names.count)
        var missing = names.count
        bytes.withUnsafeBufferPointer { bytes in
            var start = 0
            for end in 0...bytes.count where end == bytes.count || bytes[end] == ASCII.ampersand {
                defer { start = end + 1 }
                guard end > start else { continue }
                let equals = bytes[start..<end].firstIndex(of: ASCII.equals) ?? end
                let piece = PieceName(UnsafeBufferPointer(rebasing: bytes[start..<equals]))
                for index in names.indices where values[index] == nil && piece.is(names[index]) {
                    values[index] = PercentEncoding.decodedString(
                        UnsafeBufferPointer(rebasing: bytes[min(equals + 1, end)..<end]), plusAsSpace: true)
                    missing -= 1
                }
                if missing == 0 { return }
            }
        }
        return values
    }

    /// An encoded name, compared with the names looked for: byte for byte when it is plain ASCII, which is what a
    /// string of it would compare as, else decoded (once) and compared as strings.
    private struct PieceName {
        let bytes: UnsafeBufferPointer<UInt8>
        let decoded: String?

        init(_ bytes: UnsafeBufferPointer<UInt8>) {
            self.bytes = bytes
            let plain = bytes.allSatisfy { $0 < 0x80 && $0 != ASCII.percent && $0 != ASCII.plus }
            decoded = plain ? nil : PercentEncoding.decodedString(bytes, plusAsSpace: true)
        }

        func `is`(_ name: String) -> Bool {
            if let decoded { return decoded == name }
            return bytes.isUTF8(of: name)
        }
    }

    /// Splits a query string (without the `?`) into its pairs, in order.
    public static func decode(_ query: some StringProtocol) -> [(String, String)] {
        decode(Array(query.utf8))
    }
}
