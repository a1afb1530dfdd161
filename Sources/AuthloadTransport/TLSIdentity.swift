import AuthloadCore
import COpenSSL

/// A certificate and its private key, in PEM: what a TLS server presents.
///
/// ```swift
/// let identity = try TLSIdentity.selfSigned(hostnames: ["localhost"], ipAddresses: ["127.0.0.1"])
/// try identity.certificatePEM.write(toFile: "staging.pem", atomically: true, encoding: .utf8)  // for clients to trust
/// ```
public struct TLSIdentity: Sendable, Equatable {
    public var certificatePEM: String
    /// Unencrypted PKCS#8 PEM.
    public var privateKeyPEM: String

    public init(certificatePEM: String, privateKeyPEM: String) {
        self.certificatePEM = certificatePEM
        self.privateKeyPEM = privateKeyPEM
    }

    /// Makes a fresh identity for a staging server: an EC P-256 key and an X.509 v3 certificate
    /// signed by that key (SHA-256), naming `hostnames` and `ipAddresses` as subject alternative
    /// names, with a random serial, valid from five minutes ago (clock skew) for `validity`.
    ///
    /// Nobody trusts it until told to: a client adds ``certificatePEM`` to its trusted certificates
    /// or turns verification off.
    ///
    /// - Throws: `TransportError(.tls)` for no names, a non-numeric address, or an OpenSSL failure.
    public static func selfSigned(
        hostnames: [String], ipAddresses: [String] = [],
        validity: Duration = .seconds(86_400)
    ) throws(TransportError) -> TLSIdentity {
        guard !(hostnames.isEmpty && ipAddresses.isEmpty) else {
            throw TransportError(.tls, "a certificate needs at least one host name or IP address")
        }
        if let bad = ipAddresses.first(where: { SocketAddress(numericHost: $0, port: 0) == nil }) {
            throw TransportError(.tls, "\"\(bad)\" is not a numeric IP address for a certificate")
        }
        if let bad = hostnames.first(where: { $0.isEmpty || $0.contains(where: { ",: ".contains($0) }) }) {
            throw TransportError(.tls, "\"\(bad)\" is not a host name for a certificate")
        }
        OpenSSLError.clear()
        let key = try generateP256Key()
        defer { EVP_PKEY_free(key) }
        guard let certificate = X509_new() else { throw OpenSSLError.error("cannot create a certificate") }
        defer { X509_free(certificate) }

        let names = hostnames.map { "DNS:\($0)" } + ipAddresses.map { "IP:\($0)" }
        try fill(
            certificate, key: key, commonName: hostnames.first ?? ipAddresses[0],
            alternativeNames: names.joined(separator: ","), validSeconds: Int(validity.components.seconds))
        guard X509_sign(certificate, key, EVP_sha256()) > 0 else { throw OpenSSLError.error("cannot sign the certificate") }

        guard let certificatePEM = PEM.text({ PEM_write_bio_X509($0, certificate) }),
            let keyPEM = PEM.text({ PEM_write_bio_PrivateKey($0, key, nil, nil, 0, nil, nil) })
        else {
            throw OpenSSLError.error("cannot write the certificate as PEM")
        }
        return TLSIdentity(certificatePEM: certificatePEM, privateKeyPEM: keyPEM)
    }

    /// The SHA-256 of the certificate (DER), as colon-separated upper-case hex, the form
    /// `openssl x509 -fingerprint -sha256` and browsers show.
    public func sha256Fingerprint() throws(TransportError) -> String {
        let certificates = PEM.certificates(certificatePEM)
        defer { for certificate in certificates { X509_free(certificate) } }
        guard let certificate = certificates.first else { throw TransportError(.tls, "the certificate is not PEM") }
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        guard X509_digest(certificate, EVP_sha256(), &digest, &length) == 1 else {
            throw OpenSSLError.error("cannot hash the certificate")
        }
        return digest.prefix(Int(length)).map { byte in
            let hex = String(byte, radix: 16, uppercase: true)
            return hex.count == 1 ? "0" + hex : hex
        }.joined(separator: ":")
    }

    private static func generateP256Key() throws(TransportError) -> OpaquePointer {
        guard let context = EVP_PKEY_CTX_new_id(EVP_PKEY_EC, nil) else { throw OpenSSLError.error("cannot create an EC key context") }
        defer { EVP_PKEY_CTX_free(context) }
        var key: OpaquePointer?
        guard EVP_PKEY_keygen_init(context) == 1,
            authload_evp_pkey_ctx_set_ec_curve(context, NID_X9_62_prime256v1) == 1,
            EVP_PKEY_keygen(context, &key) == 1, let key
        else {
            throw OpenSSLError.error("cannot generate a P-256 key")
        }
        return key
    }

    private static func fill(
        _ certificate: OpaquePointer, key: OpaquePointer, commonName: String,
        alternativeNames: String, validSeconds: Int
    ) throws(TransportError) {
        guard let serial = BN_new() else { throw OpenSSLError.error("cannot make a serial number") }
        defer { BN_free(serial) }
        // 127 random bits: positive and within the 20 octets RFC 5280 allows.
        guard X509_set_version(certificate, 2) == 1,
            BN_rand(serial, 127, BN_RAND_TOP_ANY, BN_RAND_BOTTOM_ANY) == 1,
            BN_to_ASN1_INTEGER(serial, X509_get_serialNumber(certificate)) != nil,
            X509_gmtime_adj(X509_getm_notBefore(certificate), -300) != nil,
            X509_gmtime_adj(X509_getm_notAfter(certificate), validSeconds) != nil,
            X509_set_pubkey(certificate, key) == 1
        else {
            throw OpenSSLError.error("cannot fill in the certificate")
        }
        let name = X509_get_subject_name(certificate)
        for (field, value) in [("O", "authload staging"), ("CN", commonName)] {
            let bytes = Array(value.utf8)
            guard X509_NAME_add_entry_by_txt(name, field, MBSTRING_ASC, bytes, Int32(bytes.count), -1, 0) == 1 else {
                throw OpenSSLError.error("cannot name the certificate's subject")
            }
        }
        guard X509_set_issuer_name(certificate, name) == 1 else { throw OpenSSLError.error("cannot name the certificate's issuer") }

        var context = X509V3_CTX()
        X509V3_set_ctx(&context, certificate, certificate, nil, nil, 0)
        let extensions: [(Int32, String)] = [
            (NID_subject_alt_name, alternativeNames),
            (NID_basic_constraints, "critical,CA:FALSE"),
            (NID_key_usage, "critical,digitalSignature"),
            (NID_ext_key_usage, "serverAuth"),
            (NID_subject_key_identifier, "hash")
        ]
        for (nid, value) in extensions {
            guard let ext = X509V3_EXT_conf_nid(nil, &context, nid, value) else {
                throw OpenSSLError.error("cannot add the certificate extension \"\(value)\"")
            }
            defer { X509_EXTENSION_free(ext) }
            guard X509_add_ext(certificate, ext, -1) == 1 else { throw OpenSSLError.error("cannot add a certificate extension") }
        }
    }
}
