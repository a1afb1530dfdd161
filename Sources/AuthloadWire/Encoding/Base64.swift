/// Bytes as RFC 4648 text, in the standard alphabet (§4) or the URL-safe one (§5): for keys, accept values, PKCE challenges and JWT segments.
///
/// Decoding is strict, because the values it reads are checked rather than displayed: no whitespace,
/// no characters from the other alphabet, and non-zero pad bits are rejected (§3.5), so each byte
/// string has exactly one accepted encoding.
///
/// ```swift
/// Base64.encoded([0x14, 0xFB, 0x9C])       // "FPuc"
/// Base64.urlEncoded(Digest.sha256(bytes))  // 43 characters, no "="
/// Base64.decoded("dGhlIHNhbXBsZSBub25jZQ==")?.count  // 16
/// ```
public enum Base64 {
    /// Returns the standard encoding, padded with `=` to a multiple of four characters.
    public static func encoded(_ bytes: some Collection<UInt8>) -> String {
        encode(bytes, alphabet: standardAlphabet, padding: true)
    }

    /// Returns the URL- and filename-safe encoding (`-` and `_`) without padding, as PKCE and JWT use it.
    public static func urlEncoded(_ bytes: some Collection<UInt8>) -> String {
        encode(bytes, alphabet: urlAlphabet, padding: false)
    }

    /// Returns the bytes of a padded standard encoding, or nil if `text` is not one.
    public static func decoded(_ text: some StringProtocol) -> [UInt8]? {
        decode(Array(text.utf8), urlSafe: false)
    }

    /// Returns the bytes of a base64url encoding, or nil if `text` is not one.
    ///
    /// Padding is optional here: RFC 7636 and JWT omit it, but some servers still send it.
    public static func urlDecoded(_ text: some StringProtocol) -> [UInt8]? {
        decode(Array(text.utf8), urlSafe: true)
    }

    private static let standardAlphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
    private static let urlAlphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
    private static let pad = UInt8(ascii: "=")

    private static func encode(_ bytes: some Collection<UInt8>, alphabet: [UInt8], padding: Bool) -> String {
        // Callers elsewhere reach this unspecialized, where every byte went through the iterator's witness: a PKCE
        // pair took two percent of a simulated Okta login. Contiguous bytes (any array) are read through a buffer.
        if let encoded = bytes.withContiguousStorageIfAvailable({ encode(buffer: $0, alphabet: alphabet, padding: padding) }) {
            return encoded
        }
        return Array(bytes).withUnsafeBufferPointer { encode(buffer: $0, alphabet: alphabet, padding: padding) }
    }

    private static func encode(buffer bytes: UnsafeBufferPointer<UInt8>, alphabet: [UInt8], padding: Bool) -> String {
        var output: [UInt8] = []
        output.reserveCapacity((bytes.count + 2) / 3 * 4)
        var iterator = bytes.makeIterator()
        while let first = iterator.next() {
            let second = iterator.next()
            let third = iterator.next()
            let group = UInt32(first) << 16 | UInt32(second ?? 0) << 8 | UInt32(third ?? 0)
            output.append(alphabet[Int(group >> 18 & 63)])
            output.append(alphabet[Int(group >> 12 & 63)])
            if second != nil { output.append(alphabet[Int(group >> 6 & 63)]) } else if padding { output.append(pad) }
            if third != nil { output.append(alphabet[Int(group & 63)]) } else if padding { output.append(pad) }
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// The six-bit value of an alphabet character, or nil for anything else.
    @inline(__always)
    private static func value(of byte: UInt8, urlSafe: Bool) -> UInt32? {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): UInt32(byte - UInt8(ascii: "A"))
        case UInt8(ascii: "a")...UInt8(ascii: "z"): UInt32(byte - UInt8(ascii: "a") + 26)
        case UInt8(ascii: "0")...UInt8(ascii: "9"): UInt32(byte - UInt8(ascii: "0") + 52)
        case UInt8(ascii: "+") where !urlSafe, UInt8(ascii: "-") where urlSafe: 62
        case UInt8(ascii: "/") where !urlSafe, UInt8(ascii: "_") where urlSafe: 63
        default: nil
        }
    }

    private static func decode(_ text: [UInt8], urlSafe: Bool) -> [UInt8]? {
        var end = text.count
        while end > 0, end > text.count - 2, text[end - 1] == pad { end -= 1 }
        let padded = end < text.count
        // Standard text must be padded to whole quads; url text may be, but then correctly.
        if (!urlSafe || padded) && text.count % 4 != 0 { return nil }
        if padded && end % 4 == 0 { return nil }
        let remainder = end % 4
        if remainder == 1 { return nil }

        var output: [UInt8] = []
        output.reserveCapacity(end / 4 * 3 + 2)
        var index = 0
        while index < end {
            let count = min(4, end - index)
            var group: UInt32 = 0
            for offset in 0..<4 {
                let sextet = offset < count ? value(of: text[index + offset], urlSafe: urlSafe) : 0
                guard let sextet else { return nil }
                group = group << 6 | sextet
            }
            output.append(UInt8(truncatingIfNeeded: group >> 16))
            if count > 2 { output.append(UInt8(truncatingIfNeeded: group >> 8)) }
            if count > 3 { output.append(UInt8(truncatingIfNeeded: group)) }
            // Bits the last character carries beyond the final byte must be zero (RFC 4648 §3.5).
            if count == 2, group & 0xFFFF != 0 { return nil }
            if count == 3, group & 0xFF != 0 { return nil }
            index += 4
        }
        return output
    }
}
