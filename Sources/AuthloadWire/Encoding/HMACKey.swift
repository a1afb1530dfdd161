import AuthloadCore
import COpenSSL

/// A secret for HMAC-SHA-256 (RFC 2104) set up in OpenSSL once, for a service that signs and checks many tokens
/// under one key.
///
/// ``Digest/hmacSHA256(key:_:)`` has OpenSSL fetch the algorithm from its provider and derive the key's inner and
/// outer pads at every call, which cost a simulated Streem soak more than the hashing. Here that is done once: each
/// computation resets a context that keeps the key (OpenSSL's `EVP_MAC_init` without a key) and hashes. A context is
/// used by one thread at a time: each call takes one from a pool, or a copy of the keyed template when the pool is
/// empty, and gives it back, so the pool holds as many as ever ran at once.
///
/// ```swift
/// let key = HMACKey(Digest.secureRandomBytes(count: 32))
/// key.sha256(Array("header.payload".utf8))   // 32 bytes, Digest.hmacSHA256(key:_:)'s
/// ```
public final class HMACKey: Sendable {
    /// A context of OpenSSL's, keyed.
    private struct Context: @unchecked Sendable {
        // Unchecked Sendable: a context is only used by the thread that took it from the pool, until it gives it back.
        let pointer: OpaquePointer
    }

    /// Keyed and never used itself, only copied (under the pool's lock), so no thread reads it while another writes.
    private let template: Context
    private let pool: Locked<[Context]>

    /// - Parameter key: the secret, of any length (RFC 2104 hashes one longer than a block first).
    public init(_ key: [UInt8]) {
        guard let mac = EVP_MAC_fetch(nil, "HMAC", nil) else {
            preconditionFailure("OpenSSL has no HMAC: \(Digest.lastOpenSSLError())")
        }
        defer { EVP_MAC_free(mac) }
        guard let context = EVP_MAC_CTX_new(mac) else { preconditionFailure("OpenSSL could not make an HMAC context") }
        let keyed = "SHA256".withCString { digest in
            "digest".withCString { name in
                var parameters = [
                    OSSL_PARAM_construct_utf8_string(name, UnsafeMutablePointer(mutating: digest), 0), OSSL_PARAM_construct_end()
                ]
                let empty: UInt8 = 0
                return key.withUnsafeBufferPointer { key in
                    withUnsafePointer(to: empty) { empty in
                        EVP_MAC_init(context, key.baseAddress ?? empty, key.count, &parameters)
                    }
                }
            }
        }
        guard keyed == 1 else { preconditionFailure("OpenSSL could not key HMAC-SHA-256: \(Digest.lastOpenSSLError())") }
        template = Context(pointer: context)
        pool = Locked([])
    }

    deinit {
        pool.withLock { contexts in
            for context in contexts { EVP_MAC_CTX_free(context.pointer) }
        }
        EVP_MAC_CTX_free(template.pointer)
    }

    /// Returns the 32-byte HMAC-SHA-256 of `bytes` under this key.
    public func sha256(_ bytes: [UInt8]) -> [UInt8] {
        bytes.withUnsafeBytes { sha256($0) }
    }

    /// ``sha256(_:)-(Array<UInt8>)`` of bytes read in place, e.g. the signed part of a token.
    public func sha256(_ bytes: UnsafeRawBufferPointer) -> [UInt8] {
        let context = take()
        defer { pool.withLock { $0.append(context) } }
        let empty: UInt8 = 0
        return [UInt8](unsafeUninitializedCapacity: Int(EVP_MAX_MD_SIZE)) { output, initialized in
            var length = 0
            let done = withUnsafePointer(to: empty) { empty in
                EVP_MAC_init(context.pointer, nil, 0, nil) == 1
                    && EVP_MAC_update(context.pointer, bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) ?? empty, bytes.count) == 1
                    && EVP_MAC_final(context.pointer, output.baseAddress, &length, output.count) == 1
            }
            // Only a provider that cannot run fails here, which no input can cause.
            guard done else { preconditionFailure("OpenSSL could not compute HMAC-SHA-256: \(Digest.lastOpenSSLError())") }
            initialized = length
        }
    }

    /// A context of the pool's, or a copy of the template when every one is in use.
    private func take() -> Context {
        let template = template
        return pool.withLock { contexts in
            if let context = contexts.popLast() { return context }
            guard let copy = EVP_MAC_CTX_dup(template.pointer) else {
                preconditionFailure("OpenSSL could not copy an HMAC context: \(Digest.lastOpenSSLError())")
            }
            return Context(pointer: copy)
        }
    }
}
