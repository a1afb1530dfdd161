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
        text.utf8.withContiguousStorageIfAvailable { decode($0, urlSafe: false) } ?? decode(Array(text.utf8), urlSafe: false)
    }

    /// Returns the bytes of a base64url encoding, or nil if `text` is not one.
    ///
    /// Padding is optional here: RFC 7636 and JWT omit it, but some servers still send it.
    public static func urlDecoded(_ text: some StringProtocol) -> [UInt8]? {
        text.utf8.withContiguousStorageIfAvailable { decode($0, urlSafe: true) } ?? decode(Array(text.utf8), urlSafe: true)
    }

    /// ``urlDecoded(_:)`` of text given as its UTF-8 bytes, e.g. a segment of a token read in place.
    public static func urlDecoded(_ text: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        decode(text, urlSafe: true)
    }

    /// Appends the base64url encoding of `bytes`, without padding, to `output`: a JWT is built in one buffer.
    public static func appendURLEncoded(_ bytes: UnsafeRawBufferPointer, to output: inout [UInt8]) {
        append(bytes.assumingMemoryBound(to: UInt8.self), alphabet: urlAlphabet, padding: false, to: &output)
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
        append(bytes, alphabet: alphabet, padding: padding, to: &output)
        return String(decoding: output, as: UTF8.self)
    }

    /// Appends the encoding of `bytes` to `output`, growing it once.
    private static func append(_ bytes: UnsafeBufferPointer<UInt8>, alphabet: [UInt8], padding: Bool, to output: inout [UInt8]) {
        let whole = bytes.count / 3 * 3
        let rest = bytes.count - whole
        let length = whole / 3 * 4 + (rest == 0 ? 0 : padding ? 4 : rest + 1)
        let start = output.count
        output.append(contentsOf: repeatElement(0, count: length))
        output.withUnsafeMutableBufferPointer { output in
            alphabet.withUnsafeBufferPointer { alphabet in
                var at = start
                func put(_ group: UInt32, shift: UInt32) {
                    output[at] = alphabet[Int(group >> shift & 63)]
                    at += 1
                }
                var index = 0
                while index < whole {
                    let group = UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8 | UInt32(bytes[index + 2])
                    put(group, shift: 18)
                    put(group, shift: 12)
                    put(group, shift: 6)
                    put(group, shift: 0)
                    index += 3
                }
                guard rest > 0 else { return }
                let group = UInt32(bytes[index]) << 16 | (rest == 2 ? UInt32(bytes[index + 1]) << 8 : 0)
                put(group, shift: 18)
                put(group, shift: 12)
                if rest == 2 { put(group, shift: 6) }
                if padding {
                    for _ in rest..<3 {
                        output[at] = pad
                        at += 1
                    }
                }
            }
        }
    }

    /// The six-bit value of each byte in an alphabet, 0xFF for a byte outside it: one load per character, where
    /// comparing it with the alphabet's ranges was most of decoding a token.
    private static func values(of alphabet: [UInt8]) -> [UInt8] {
        var values = [UInt8](repeating: 0xFF, count: 256)
        for (value, byte) in alphabet.enumerated() { values[Int(byte)] = UInt8(value) }
        return values
    }

    private static let standardValues = values(of: standardAlphabet)
    private static let urlValues = values(of: urlAlphabet)

    private static func decode(_ text: [UInt8], urlSafe: Bool) -> [UInt8]? {
        text.withUnsafeBufferPointer { decode($0, urlSafe: urlSafe) }
    }

    private static func decode(_ text: UnsafeBufferPointer<UInt8>, urlSafe: Bool) -> [UInt8]? {
        var end = text.count
        while end > 0, end > text.count - 2, text[end - 1] == pad { end -= 1 }
        let padded = end < text.count
        // Standard text must be padded to whole quads; url text may be, but then correctly.
        if (!urlSafe || padded) && text.count % 4 != 0 { return nil }
        if padded && end % 4 == 0 { return nil }
        let remainder = end % 4
        if remainder == 1 { return nil }

        // Written in place into an array of the exact length, which a failure leaves unused.
        var valid = true
        let output = [UInt8](unsafeUninitializedCapacity: end / 4 * 3 + max(0, remainder - 1)) { output, initialized in
            (urlSafe ? urlValues : standardValues).withUnsafeBufferPointer { values in
                var at = 0
                var index = 0
                while index < end {
                    let count = min(4, end - index)
                    var group: UInt32 = 0
                    var invalid: UInt8 = 0
                    for offset in 0..<4 {
                        let sextet = offset < count ? values[Int(text[index + offset])] : 0
                        invalid |= sextet
                        group = group << 6 | UInt32(sextet & 63)
                    }
                    // A byte outside the alphabet has its top bit set; bits the last character carries beyond the
                    // final byte must be zero (RFC 4648 §3.5).
                    if invalid & 0x80 != 0 || count == 2 && group & 0xFFFF != 0 || count == 3 && group & 0xFF != 0 {
                        valid = false
                        return
                    }
                    output[at] = UInt8(truncatingIfNeeded: group >> 16)
                    if count > 2 { output[at + 1] = UInt8(truncatingIfNeeded: group >> 8) }
                    if count > 3 { output[at + 2] = UInt8(truncatingIfNeeded: group) }
                    at += count - 1
                    initialized = at
                    index += 4
                }
            }
        }
        return valid ? output : nil
    }
}
