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

    /// Why `text` gave no certificate: it has none, or one OpenSSL cannot read (cut short, bad base64).
    static func noCertificateProblem(_ text: String) -> String {
        text.contains("-----BEGIN CERTIFICATE-----")
            ? "holds a PEM certificate OpenSSL cannot read (cut short or damaged?)"
            : "holds no PEM certificate (-----BEGIN CERTIFICATE-----)"
    }

    /// The first private key in `text` (unencrypted); the caller frees it with `EVP_PKEY_free`.
    static func privateKey(_ text: String) -> OpaquePointer? {
        withReader(text) { bio in PEM_read_bio_PrivateKey(bio, nil, authload_no_passphrase, nil) }
    }

    /// The first private key in `text`, or what keeps it from being read, in words that hold none of the
    /// key's bytes; the caller frees the key with `EVP_PKEY_free`.
    static func privateKeyOrProblem(_ text: String) -> Result<OpaquePointer, TLSKeyProblem> {
        if let key = privateKey(text) { return .success(key) }
        if text.contains("ENCRYPTED") {
            return .failure(TLSKeyProblem("is encrypted; authload reads unencrypted keys only (openssl pkey -in KEY -out PLAIN)"))
        }
        if !text.contains("-----BEGIN") || !text.contains("PRIVATE KEY-----") {
            return .failure(TLSKeyProblem("holds no PEM private key (-----BEGIN PRIVATE KEY-----)"))
        }
        return .failure(TLSKeyProblem("holds a PEM private key OpenSSL cannot read"))
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

/// Why a PEM private key could not be read.
struct TLSKeyProblem: Error, Equatable {
    let text: String
    init(_ text: String) { self.text = text }
}
