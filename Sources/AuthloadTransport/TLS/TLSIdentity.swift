import AuthloadCore
import COpenSSL

/// A certificate and its private key, in PEM: what a TLS server presents.
///
/// ```swift
/// let identity = try TLSIdentity.selfSigned(hostnames: ["localhost"], ipAddresses: ["127.0.0.1"])
/// try identity.certificatePEM.write(toFile: "staging.pem", atomically: true, encoding: .utf8)  // for clients to trust
/// ```
public struct TLSIdentity: Sendable, Equatable, CustomStringConvertible {
    public var certificatePEM: String
    /// Unencrypted PKCS#8 PEM.
    public var privateKeyPEM: String

    public init(certificatePEM: String, privateKeyPEM: String) {
        self.certificatePEM = certificatePEM
        self.privateKeyPEM = privateKeyPEM
    }

    /// The certificate's size and no key: an identity printed into a log must not leak it.
    public var description: String { "TLSIdentity(certificate: \(certificatePEM.count) bytes of PEM, private key: redacted)" }

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
        let names = try alternativeNames(hostnames: hostnames, ipAddresses: ipAddresses)
        return try make(
            commonName: hostnames.first ?? ipAddresses[0], issuer: nil, notBefore: .seconds(-300), notAfter: validity,
            extensions: [(NID_subject_alt_name, names)] + Purpose.server.extensions)
    }

    /// What a certificate made here is for.
    public enum Purpose: Sendable {
        /// A TLS server's (`serverAuth`).
        case server
        /// A TLS client's, for servers that ask for one (`clientAuth`).
        case client
        /// An intermediate CA's, which issues certificates in turn (`CA:TRUE`, `keyCertSign`).
        case authority

        fileprivate var extensions: [(Int32, String)] {
            switch self {
            case .server, .client:
                [
                    (NID_basic_constraints, "critical,CA:FALSE"),
                    (NID_key_usage, "critical,digitalSignature"),
                    (NID_ext_key_usage, self == .server ? "serverAuth" : "clientAuth"),
                    (NID_subject_key_identifier, "hash")
                ]
            case .authority:
                [
                    (NID_basic_constraints, "critical,CA:TRUE"), (NID_key_usage, "critical,keyCertSign,cRLSign"),
                    (NID_subject_key_identifier, "hash")
                ]
            }
        }
    }

    /// Makes a certificate authority: a self-signed CA certificate (`CA:TRUE`, `keyCertSign`) and its key,
    /// for ``issue(commonName:hostnames:ipAddresses:purpose:notBefore:notAfter:)`` to sign with, as a staging
    /// stack's private CA does. Clients trust its ``certificatePEM``; it never serves a connection itself.
    public static func authority(commonName: String, validity: Duration = .seconds(86_400)) throws(TransportError) -> TLSIdentity {
        try make(
            commonName: commonName, issuer: nil, notBefore: .seconds(-300), notAfter: validity,
            extensions: Purpose.authority.extensions)
    }

    /// A certificate this identity (an ``authority(commonName:validity:)``) signs, with a key of its own.
    ///
    /// - Parameters:
    ///   - notBefore: when it starts to be valid, from now (negative: in the past).
    ///   - notAfter: when it stops, from now; negative makes a certificate that has expired, as a test needs.
    /// - Throws: `TransportError(.tls)` for a non-numeric address, a bad name, a key that is not PEM, or an
    ///   OpenSSL failure.
    public func issue(
        commonName: String, hostnames: [String] = [], ipAddresses: [String] = [], purpose: Purpose = .server,
        notBefore: Duration = .seconds(-300), notAfter: Duration = .seconds(86_400)
    ) throws(TransportError) -> TLSIdentity {
        let certificates = PEM.certificates(certificatePEM)
        defer { for certificate in certificates { X509_free(certificate) } }
        guard let certificate = certificates.first else { throw TransportError(.tls, "the issuer's certificate is not PEM") }
        guard let key = PEM.privateKey(privateKeyPEM) else { throw TransportError(.tls, "the issuer's key is not PEM") }
        defer { EVP_PKEY_free(key) }
        var extensions = purpose.extensions + [(NID_authority_key_identifier, "keyid")]
        if !(hostnames.isEmpty && ipAddresses.isEmpty) {
            extensions.insert((NID_subject_alt_name, try Self.alternativeNames(hostnames: hostnames, ipAddresses: ipAddresses)), at: 0)
        }
        return try Self.make(
            commonName: commonName, issuer: (certificate, key), notBefore: notBefore, notAfter: notAfter, extensions: extensions)
    }

    /// `DNS:…,IP:…`, the subject alternative names of a certificate, once each name is checked.
    private static func alternativeNames(hostnames: [String], ipAddresses: [String]) throws(TransportError) -> String {
        guard !(hostnames.isEmpty && ipAddresses.isEmpty) else {
            throw TransportError(.tls, "a certificate needs at least one host name or IP address")
        }
        if let bad = ipAddresses.first(where: { SocketAddress(numericHost: $0, port: 0) == nil }) {
            throw TransportError(.tls, "\"\(bad)\" is not a numeric IP address for a certificate")
        }
        if let bad = hostnames.first(where: { $0.isEmpty || $0.contains(where: { ",: ".contains($0) }) }) {
            throw TransportError(.tls, "\"\(bad)\" is not a host name for a certificate")
        }
        return (hostnames.map { "DNS:\($0)" } + ipAddresses.map { "IP:\($0)" }).joined(separator: ",")
    }

    /// A new P-256 key and a certificate for it, signed by `issuer` (certificate and key), or by itself.
    private static func make(
        commonName: String, issuer: (certificate: OpaquePointer, key: OpaquePointer)?, notBefore: Duration, notAfter: Duration,
        extensions: [(Int32, String)]
    ) throws(TransportError) -> TLSIdentity {
        OpenSSLError.clear()
        let key = try generateP256Key()
        defer { EVP_PKEY_free(key) }
        guard let certificate = X509_new() else { throw OpenSSLError.error("cannot create a certificate") }
        defer { X509_free(certificate) }
        try fill(
            certificate, key: key, commonName: commonName, issuer: issuer?.certificate, notBefore: Int(notBefore.components.seconds),
            notAfter: Int(notAfter.components.seconds), extensions: extensions)
        guard X509_sign(certificate, issuer?.key ?? key, EVP_sha256()) > 0 else { throw OpenSSLError.error("cannot sign the certificate") }

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
        _ certificate: OpaquePointer, key: OpaquePointer, commonName: String, issuer: OpaquePointer?, notBefore: Int, notAfter: Int,
        extensions: [(Int32, String)]
    ) throws(TransportError) {
        guard let serial = BN_new() else { throw OpenSSLError.error("cannot make a serial number") }
        defer { BN_free(serial) }
        // 127 random bits: positive and within the 20 octets RFC 5280 allows.
        guard X509_set_version(certificate, 2) == 1,
            BN_rand(serial, 127, BN_RAND_TOP_ANY, BN_RAND_BOTTOM_ANY) == 1,
            BN_to_ASN1_INTEGER(serial, X509_get_serialNumber(certificate)) != nil,
            X509_gmtime_adj(X509_getm_notBefore(certificate), notBefore) != nil,
            X509_gmtime_adj(X509_getm_notAfter(certificate), notAfter) != nil,
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
        guard X509_set_issuer_name(certificate, issuer.map { X509_get_subject_name($0) } ?? name) == 1 else {
            throw OpenSSLError.error("cannot name the certificate's issuer")
        }

        var context = X509V3_CTX()
        X509V3_set_ctx(&context, issuer ?? certificate, certificate, nil, nil, 0)
        for (nid, value) in extensions {
            guard let ext = X509V3_EXT_conf_nid(nil, &context, nid, value) else {
                throw OpenSSLError.error("cannot add the certificate extension \"\(value)\"")
            }
            defer { X509_EXTENSION_free(ext) }
            guard X509_add_ext(certificate, ext, -1) == 1 else { throw OpenSSLError.error("cannot add a certificate extension") }
        }
    }
}
