/// Escapes bytes as `%XX` (RFC 3986 §2.1) for request targets and form bodies, and reverses it.
///
/// Everything outside the unreserved set (`A–Z a–z 0–9 - . _ ~`) is encoded, UTF-8 byte by byte,
/// so the result is safe as a path segment, a query name or value, or a form field alike.
///
/// ```swift
/// let target = "/users/\(PercentEncoding.encode(name))?q=\(PercentEncoding.encode(query))"
/// PercentEncoding.decode("a%20b+c", plusAsSpace: true)   // "a b c"
/// ```
public enum PercentEncoding {
    /// Returns `text` with every byte outside the unreserved set written as `%XX` (upper-case hex).
    public static func encode(_ text: some StringProtocol) -> String { encoded(text) }

    /// ``encode(_:)`` of a `String`, specialized in this module: called from another, the generic one
    /// read each byte through the protocol's witnesses (a GCCS flow encodes every query it sends).
    public static func encode(_ text: String) -> String { encoded(text) }

    private static func encoded(_ text: some StringProtocol) -> String {
        // Identifiers and tokens are usually already safe: return them without building new bytes.
        if text.utf8.allSatisfy(ASCII.isUnreserved) { return String(text) }
        var bytes: [UInt8] = []
        append(encoding: text, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Returns `text` with `%XX` sequences decoded, and `+` read as a space when `plusAsSpace` is set.
    ///
    /// Malformed escapes are kept as they are and bytes that are not UTF-8 become U+FFFD, as the
    /// WHATWG URL standard does, so decoding never fails.
    public static func decode(_ text: some StringProtocol, plusAsSpace: Bool = false) -> String {
        Array(text.utf8).withUnsafeBufferPointer { decodedString($0, plusAsSpace: plusAsSpace) }
    }

    /// `bytes` decoded as ``decode(_:plusAsSpace:)`` decodes them: made straight from them when nothing in them is
    /// escaped, where decoding into an array first cost every name and value of a form or query an allocation.
    static func decodedString(_ bytes: UnsafeBufferPointer<UInt8>, plusAsSpace: Bool) -> String {
        let escaped = bytes.contains { $0 == ASCII.percent || (plusAsSpace && $0 == ASCII.plus) }
        guard escaped else { return String(decoding: bytes, as: UTF8.self) }
        return String(decoding: decodedBytes(bytes, plusAsSpace: plusAsSpace), as: UTF8.self)
    }

    static func append(encoding text: some StringProtocol, to bytes: inout [UInt8]) {
        let appended: Void? = text.utf8.withContiguousStorageIfAvailable { append(encoding: $0, to: &bytes) }
        if appended == nil { Array(text.utf8).withUnsafeBufferPointer { append(encoding: $0, to: &bytes) } }
    }

    /// Copies each run of unreserved bytes in one append, where a byte at a time checked capacity and uniqueness at
    /// every byte of a form body.
    private static func append(encoding utf8: UnsafeBufferPointer<UInt8>, to bytes: inout [UInt8]) {
        var runStart = 0
        for index in utf8.indices where !ASCII.isUnreserved(utf8[index]) {
            let byte = utf8[index]
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<index]))
            bytes.append(ASCII.percent)
            bytes.append(ASCII.hexDigit(byte >> 4))
            bytes.append(ASCII.hexDigit(byte & 0xF))
            runStart = index + 1
        }
        bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart...]))
    }

    static func decodedBytes(_ bytes: UnsafeBufferPointer<UInt8>, plusAsSpace: Bool) -> [UInt8] {
        var result: [UInt8] = []
        result.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte == ASCII.percent, index + 2 < bytes.count,
                let high = ASCII.hexValue(bytes[index + 1]), let low = ASCII.hexValue(bytes[index + 2])
            {
                result.append(high << 4 | low)
                index += 3
                continue
            }
            result.append(plusAsSpace && byte == ASCII.plus ? ASCII.space : byte)
            index += 1
        }
        return result
    }
}
