import COpenSSL

/// The GCCS SDK's `enCodeCK`, `enCodeBK` and `enCodeDK` fields: base64 of AES-256-CBC with PKCS#7 padding,
/// keyed by the channel key (docs/protocols.md, GCCS).
///
/// The key is the channel key's first 32 bytes; a shorter channel key is filled up to 32 with the SDK's
/// repeating `FNSVALUEfnsvalue` pattern. The IV is the key's first 16 bytes. The cipher is OpenSSL's EVP.
///
/// ```swift
/// let field = GCCSFieldCipher.encrypt(deviceID, channelKey: channelKey)      // sent as enCodeDK
/// GCCSFieldCipher.decrypt(field, channelKey: channelKey) == deviceID          // what a server checks
///
/// let sealer = GCCSFieldCipher.Keyed(channelKey: channelKey, encrypting: true)  // the three fields, keyed once
/// let fields = [channelKey, blockKey, deviceID].map(sealer.encrypt)
/// ```
public enum GCCSFieldCipher {
    static let filler = Array("FNSVALUEfnsvalue".utf8)

    /// The AES-256 key and the IV derived from `channelKey`.
    static func keyAndIV(channelKey: String) -> (key: [UInt8], iv: [UInt8]) {
        // Built from the string's bytes in place: through `utf8.prefix(32)` they went one at a time.
        var key = [UInt8](repeating: 0, count: 32)
        var channelKey = channelKey
        let given = channelKey.withUTF8 { bytes in
            let given = min(bytes.count, 32)
            for index in 0..<given { key[index] = bytes[index] }
            return given
        }
        // The filler starts over where the channel key ends.
        for index in given..<32 { key[index] = filler[(index - given) % filler.count] }
        return (key, Array(key[..<16]))
    }

    /// `value` encrypted under `channelKey`, base64-encoded.
    public static func encrypt(_ value: String, channelKey: String) -> String {
        Keyed(channelKey: channelKey, encrypting: true).encrypt(value)
    }

    /// The value `field` holds, or nil when it is not base64 of a ciphertext under `channelKey` (bad padding,
    /// wrong key) or not UTF-8.
    public static func decrypt(_ field: String, channelKey: String) -> String? {
        Keyed(channelKey: channelKey, encrypting: false).decrypt(field)
    }

    /// AES-256-CBC fetched from the default provider once: given `EVP_aes_256_cbc()`, OpenSSL 3 looked the cipher up
    /// by name at every `EVP_CipherInit_ex`, which was most of what a field cost it.
    ///
    /// `nonisolated(unsafe)`: written once by the `static let`'s initializer and only read after; an `EVP_CIPHER`
    /// fetched this way is immutable and OpenSSL allows it to be used from any thread.
    nonisolated(unsafe) private static let aes256CBC: OpaquePointer? = EVP_CIPHER_fetch(nil, "AES-256-CBC", nil)

    /// One channel key's cipher in one direction, its key set up once for every field it seals or opens: a GCCS
    /// authentication sends three fields under the same key, and the server opens all three.
    ///
    /// Each field starts from the IV afresh, so a field comes out the same as it does alone.
    public struct Keyed: ~Copyable {
        /// The context, keyed; nil when OpenSSL could not make one (then every field fails).
        private let context: OpaquePointer?
        private let iv: [UInt8]
        private let encrypting: Bool

        /// - Parameter encrypting: whether it seals fields (``encrypt(_:)``) or opens them (``decrypt(_:)``).
        public init(channelKey: String, encrypting: Bool) {
            let (key, iv) = GCCSFieldCipher.keyAndIV(channelKey: channelKey)
            self.iv = iv
            self.encrypting = encrypting
            var context = EVP_CIPHER_CTX_new()
            if let made = context,
                EVP_CipherInit_ex(made, GCCSFieldCipher.aes256CBC ?? EVP_aes_256_cbc(), nil, key, iv, encrypting ? 1 : 0) != 1
            {
                EVP_CIPHER_CTX_free(made)
                context = nil
            }
            self.context = context
        }

        deinit { EVP_CIPHER_CTX_free(context) }

        /// `value` encrypted, base64-encoded; for a sealer made with `encrypting: true`.
        public func encrypt(_ value: String) -> String {
            precondition(encrypting, "a field is encrypted by a cipher keyed to encrypt")
            // Encryption of a short string with a valid key and IV cannot fail in OpenSSL; a failure is a broken library.
            guard let sealed = crypt(Array(value.utf8)) else {
                preconditionFailure("OpenSSL could not AES-256-CBC-encrypt: \(Digest.lastOpenSSLError())")
            }
            return Base64.encoded(sealed)
        }

        /// The value `field` holds, or nil (see ``GCCSFieldCipher/decrypt(_:channelKey:)``); for one made with
        /// `encrypting: false`.
        public func decrypt(_ field: String) -> String? {
            precondition(!encrypting, "a field is decrypted by a cipher keyed to decrypt")
            guard let sealed = Base64.decoded(field), !sealed.isEmpty, sealed.count % 16 == 0, let opened = crypt(sealed) else {
                return nil
            }
            return String(validating: opened, as: UTF8.self)
        }

        private func crypt(_ input: [UInt8]) -> [UInt8]? {
            guard let context else { return nil }
            // A new IV (the key stays) starts the chain and the padding afresh.
            guard EVP_CipherInit_ex(context, nil, nil, nil, iv, -1) == 1 else { return nil }
            var output = [UInt8](repeating: 0, count: input.count + 16)
            var written: Int32 = 0
            var final: Int32 = 0
            let ok = output.withUnsafeMutableBufferPointer { out -> Bool in
                // OpenSSL wants a pointer even for an empty input.
                let source = input.isEmpty ? [0] : input
                guard EVP_CipherUpdate(context, out.baseAddress, &written, source, Int32(input.count)) == 1 else { return false }
                return EVP_CipherFinal_ex(context, out.baseAddress! + Int(written), &final) == 1
            }
            guard ok else { return nil }
            output.removeLast(output.count - Int(written + final))
            return output
        }
    }
}
