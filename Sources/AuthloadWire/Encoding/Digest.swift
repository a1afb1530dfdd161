import AuthloadCore
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
        digest(bytes, sha1Type ?? EVP_sha1(), name: "SHA-1")
    }

    /// Returns the 32-byte SHA-256 of `bytes`.
    public static func sha256(_ bytes: some Collection<UInt8>) -> [UInt8] {
        digest(bytes, sha256Type ?? EVP_sha256(), name: "SHA-256")
    }

    /// The digests fetched from the default provider once: given `EVP_sha256()`, OpenSSL 3 looked the digest up by
    /// name at every `EVP_Digest`, more than half of what hashing a PKCE verifier cost (an Okta IDX login hashes one
    /// on each side).
    ///
    /// `nonisolated(unsafe)`: written once by the `static let`'s initializer and only read after; an `EVP_MD` fetched
    /// this way is immutable and OpenSSL allows it to be used from any thread.
    nonisolated(unsafe) private static let sha256Type: OpaquePointer? = EVP_MD_fetch(nil, "SHA2-256", nil)
    nonisolated(unsafe) private static let sha1Type: OpaquePointer? = EVP_MD_fetch(nil, "SHA1", nil)

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
    /// Small draws are served from a block drawn at once (``RandomPool``). Should OpenSSL ever fail to produce them
    /// (an unseeded or broken provider), the bytes come from the system generator instead (`getrandom` on Linux,
    /// `arc4random` on Darwin), which is just as unpredictable; a load run should not stop over where its mask keys
    /// came from.
    public static func secureRandomBytes(count: Int) -> [UInt8] {
        guard count > 0 else { return [] }
        var bytes = [UInt8](repeating: 0, count: count)
        let produced = bytes.withUnsafeMutableBufferPointer { buffer in
            count <= RandomPool.largestDraw ? randomPool.withLock { $0.take(into: buffer) } : RandomPool.draw(into: buffer)
        }
        if !produced {
            var generator = SystemRandomNumberGenerator()
            for index in bytes.indices { bytes[index] = generator.next() }
        }
        return bytes
    }

    private static let randomPool = Locked(RandomPool())

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

/// Bytes from `RAND_bytes` drawn a block at a time and handed out in order, each byte once.
///
/// A `RAND_bytes` call costs OpenSSL 3 about the same whatever its length (a fork check, the DRBG's locks, provider
/// parameter look-ups), and the draws of a load test are small and many: an Okta IDX login draws its PKCE verifier and
/// state, 1.4 % of a simulated soak's CPU as two calls. The block comes from the same DRBG the calls would have read,
/// so the bytes are as unpredictable; a byte is zeroed in the block once it is handed out. authload never forks
/// without exec, so no two processes share a block.
private struct RandomPool: Sendable {
    /// Draws up to this many bytes come from the block; larger ones from `RAND_bytes` directly.
    static let largestDraw = 256
    private static let blockSize = 4096
    private var block: [UInt8] = []
    private var next = 0

    /// Fills `buffer` (at most ``largestDraw`` bytes) from the block, drawing a new block when this one runs out.
    ///
    /// - Returns: false when OpenSSL could not produce a block.
    mutating func take(into buffer: UnsafeMutableBufferPointer<UInt8>) -> Bool {
        if block.count - next < buffer.count {
            if block.isEmpty { block = [UInt8](repeating: 0, count: Self.blockSize) }
            guard block.withUnsafeMutableBufferPointer({ Self.draw(into: $0) }) else { return false }
            next = 0
        }
        block.withUnsafeMutableBufferPointer { block in
            let taken = UnsafeMutableBufferPointer(rebasing: block[next..<next + buffer.count])
            _ = buffer.initialize(fromContentsOf: taken)
            taken.update(repeating: 0)
        }
        next += buffer.count
        return true
    }

    /// Fills `buffer` from `RAND_bytes`, in slices of what its `Int32` length allows.
    ///
    /// - Returns: false when OpenSSL could not produce them.
    static func draw(into buffer: UnsafeMutableBufferPointer<UInt8>) -> Bool {
        var start = 0
        while start < buffer.count {
            let length = min(buffer.count - start, Int(Int32.max))
            guard RAND_bytes(buffer.baseAddress! + start, Int32(length)) == 1 else { return false }
            start += length
        }
        return true
    }
}
