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
/// ```
public enum GCCSFieldCipher {
    static let filler = Array("FNSVALUEfnsvalue".utf8)

    /// The AES-256 key and the IV derived from `channelKey`.
    static func keyAndIV(channelKey: String) -> (key: [UInt8], iv: [UInt8]) {
        // Built in place: the flow and the service derive it three times an authentication each.
        var key: [UInt8] = []
        key.reserveCapacity(32)
        key.append(contentsOf: channelKey.utf8.prefix(32))
        // The filler starts over where the channel key ends.
        let given = key.count
        while key.count < 32 { key.append(filler[(key.count - given) % filler.count]) }
        return (key, Array(key[..<16]))
    }

    /// `value` encrypted under `channelKey`, base64-encoded.
    public static func encrypt(_ value: String, channelKey: String) -> String {
        // Encryption of a short string with a valid key and IV cannot fail in OpenSSL; a failure is a broken library.
        guard let sealed = crypt(Array(value.utf8), channelKey: channelKey, encrypting: true) else {
            preconditionFailure("OpenSSL could not AES-256-CBC-encrypt: \(Digest.lastOpenSSLError())")
        }
        return Base64.encoded(sealed)
    }

    /// The value `field` holds, or nil when it is not base64 of a ciphertext under `channelKey` (bad padding,
    /// wrong key) or not UTF-8.
    public static func decrypt(_ field: String, channelKey: String) -> String? {
        guard let sealed = Base64.decoded(field), !sealed.isEmpty, sealed.count % 16 == 0,
            let opened = crypt(sealed, channelKey: channelKey, encrypting: false)
        else { return nil }
        return String(validating: opened, as: UTF8.self)
    }

    private static func crypt(_ input: [UInt8], channelKey: String, encrypting: Bool) -> [UInt8]? {
        let (key, iv) = keyAndIV(channelKey: channelKey)
        guard let context = EVP_CIPHER_CTX_new() else { return nil }
        defer { EVP_CIPHER_CTX_free(context) }
        let mode: Int32 = encrypting ? 1 : 0
        guard EVP_CipherInit_ex(context, EVP_aes_256_cbc(), nil, key, iv, mode) == 1 else { return nil }
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
