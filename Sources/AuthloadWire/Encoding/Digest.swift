import COpenSSL

/// Hashes and secure random bytes from the system OpenSSL, so no cryptographic primitive is ours.
///
/// The WebSocket handshake needs SHA-1 and fresh random keys; PKCE (RFC 7636, `S256`) needs SHA-256.
///
/// ```swift
/// let challenge = Base64.urlEncoded(Digest.sha256(Array(verifier.utf8)))
/// let key = Base64.encoded(Digest.secureRandomBytes(count: 16))
/// ```
public enum Digest {
    /// Returns the 20-byte SHA-1 of `bytes`.
    public static func sha1(_ bytes: some Collection<UInt8>) -> [UInt8] {
        digest(bytes, EVP_sha1(), name: "SHA-1")
    }

    /// Returns the 32-byte SHA-256 of `bytes`.
    public static func sha256(_ bytes: some Collection<UInt8>) -> [UInt8] {
        digest(bytes, EVP_sha256(), name: "SHA-256")
    }

    /// Returns the 32-byte HMAC-SHA-256 of `bytes` under `key` (RFC 2104), as HS256 JWTs need.
    public static func hmacSHA256(key: [UInt8], _ bytes: [UInt8]) -> [UInt8] {
        bytes.withUnsafeBytes { hmacSHA256(key: key, $0) }
    }

    /// ``hmacSHA256(key:_:)`` of bytes read in place, e.g. the signed part of a token.
    public static func hmacSHA256(key: [UInt8], _ bytes: UnsafeRawBufferPointer) -> [UInt8] {
        var length: UInt32 = 0
        // HMAC wants pointers even for empty inputs.
        let empty: UInt8 = 0
        let output = [UInt8](unsafeUninitializedCapacity: Int(EVP_MAX_MD_SIZE)) { output, initialized in
            let result = key.withUnsafeBufferPointer { key in
                withUnsafePointer(to: empty) { empty in
                    HMAC(
                        EVP_sha256(), key.baseAddress.map(UnsafeRawPointer.init) ?? UnsafeRawPointer(empty), Int32(key.count),
                        bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) ?? empty, bytes.count, output.baseAddress, &length)
                }
            }
            guard result != nil else { preconditionFailure("OpenSSL could not compute HMAC-SHA-256: \(lastOpenSSLError())") }
            initialized = Int(length)
        }
        return output
    }

    /// Compares two byte strings in time that does not depend on where they differ (`CRYPTO_memcmp`).
    public static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        guard !a.isEmpty else { return true }
        return CRYPTO_memcmp(a, b, a.count) == 0
    }

    /// Returns `count` bytes from OpenSSL's CSPRNG (`RAND_bytes`), or none when `count` is not positive.
    ///
    /// Should OpenSSL ever fail to produce them (an unseeded or broken provider), the bytes come from
    /// the system generator instead (`getrandom` on Linux, `arc4random` on Darwin), which is just as
    /// unpredictable; a load run should not stop over where its mask keys came from.
    public static func secureRandomBytes(count: Int) -> [UInt8] {
        guard count > 0 else { return [] }
        var bytes = [UInt8](repeating: 0, count: count)
        let produced = bytes.withUnsafeMutableBufferPointer { buffer in
            // RAND_bytes takes an Int32 length, so very large requests go in slices.
            var start = 0
            while start < buffer.count {
                let length = min(buffer.count - start, Int(Int32.max))
                guard RAND_bytes(buffer.baseAddress! + start, Int32(length)) == 1 else { return false }
                start += length
            }
            return true
        }
        if !produced {
            var generator = SystemRandomNumberGenerator()
            for index in bytes.indices { bytes[index] = generator.next() }
        }
        return bytes
    }

    private static func digest(_ bytes: some Collection<UInt8>, _ type: OpaquePointer?, name: String) -> [UInt8] {
        let hashed =
            bytes.withContiguousStorageIfAvailable { digest(UnsafeRawBufferPointer($0), type) }
            ?? Array(bytes).withUnsafeBytes { digest($0, type) }
        // EVP_Digest only fails when the provider cannot be loaded, which no input can cause; there is
        // nothing sensible to return instead of a hash.
        guard let hashed else { preconditionFailure("OpenSSL could not compute \(name): \(lastOpenSSLError())") }
        return hashed
    }

    private static func digest(_ bytes: UnsafeRawBufferPointer, _ type: OpaquePointer?) -> [UInt8]? {
        var output = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        // An empty buffer may have no base address; OpenSSL wants a pointer even for zero bytes.
        let empty: UInt8 = 0
        let status = withUnsafePointer(to: empty) { emptyPointer in
            EVP_Digest(bytes.baseAddress ?? UnsafeRawPointer(emptyPointer), bytes.count, &output, &length, type, nil)
        }
        guard status == 1 else { return nil }
        output.removeSubrange(Int(length)...)
        return output
    }

    static func lastOpenSSLError() -> String {
        let code = ERR_get_error()
        guard code != 0 else { return "no error queued" }
        var text = [CChar](repeating: 0, count: 256)
        ERR_error_string_n(code, &text, text.count)
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
