import COpenSSL

/// PEM text in and out of OpenSSL objects, through memory BIOs.
enum PEM {
    /// Every certificate in `text`, in order; the caller frees each with `X509_free`.
    static func certificates(_ text: String) -> [OpaquePointer] {
        withReader(text) { bio in
            var certificates: [OpaquePointer] = []
            while let certificate = PEM_read_bio_X509(bio, nil, nil, nil) { certificates.append(certificate) }
            return certificates
        }
    }

    /// The first private key in `text` (unencrypted); the caller frees it with `EVP_PKEY_free`.
    static func privateKey(_ text: String) -> OpaquePointer? {
        withReader(text) { bio in PEM_read_bio_PrivateKey(bio, nil, nil, nil) }
    }

    /// What `write` puts into a memory BIO, as text; nil when it fails.
    static func text(_ write: (OpaquePointer) -> Int32) -> String? {
        guard let bio = BIO_new(BIO_s_mem()) else { return nil }
        defer { BIO_free(bio) }
        guard write(bio) == 1 else { return nil }
        var bytes = [UInt8](repeating: 0, count: Int(BIO_ctrl_pending(bio)))
        let count = bytes.withUnsafeMutableBytes { BIO_read(bio, $0.baseAddress, Int32($0.count)) }
        guard count == bytes.count else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func withReader<R>(_ text: String, _ body: (OpaquePointer) -> R?) -> R? {
        let bytes = Array(text.utf8)
        return bytes.withUnsafeBytes { buffer -> R? in
            guard let bio = BIO_new_mem_buf(buffer.baseAddress, Int32(buffer.count)) else { return nil }
            defer { BIO_free(bio) }
            let result = body(bio)
            // Reading stops at the first failure (the end of the text, too), which OpenSSL queues as an error.
            ERR_clear_error()
            return result
        }
    }

    private static func withReader<R>(_ text: String, _ body: (OpaquePointer) -> [R]) -> [R] {
        withReader(text) { bio -> [R]? in body(bio) } ?? []
    }
}
