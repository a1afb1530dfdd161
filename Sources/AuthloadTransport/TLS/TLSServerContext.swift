import AuthloadCore
import COpenSSL

/// One OpenSSL server context (`SSL_CTX`) holding the certificate and key every accepted TLS
/// connection of an ``HTTPServer`` presents.
///
/// ```swift
/// let identity = try TLSIdentity.selfSigned(hostnames: ["localhost"], ipAddresses: ["127.0.0.1"])
/// let server = try HTTPServer(group: loops, port: 8443, service: service, tls: TLSServerContext(identity: identity))
/// ```
///
/// `@unchecked Sendable`: the `SSL_CTX` is configured in `init` and never changed after; OpenSSL allows
/// `SSL_new` on a configured context from any thread.
public final class TLSServerContext: @unchecked Sendable {
    private let context: OpaquePointer
    /// Whether ALPN chooses h2 for a client that offers it (else every connection speaks HTTP/1.1).
    public let offersHTTP2: Bool

    /// - Parameters:
    ///   - clientAuthoritiesPEM: when set, every client must present a certificate issued by one of
    ///     these CAs (mutual TLS, as some gateways ask); a client without one, or with another, is refused.
    ///   - offersHTTP2: choose `h2` by ALPN when the client offers it, `http/1.1` otherwise.
    /// - Throws: `TransportError(.tls)` when the certificate or key is not PEM or they do not match.
    public init(identity: TLSIdentity, clientAuthoritiesPEM: String? = nil, offersHTTP2: Bool = true) throws(TransportError) {
        self.offersHTTP2 = offersHTTP2
        OpenSSLError.clear()
        guard let context = SSL_CTX_new(TLS_server_method()) else {
            throw OpenSSLError.error("cannot create a TLS server context")
        }
        self.context = context
        guard authload_ssl_ctx_configure(context) == 1 else { throw OpenSSLError.error("cannot configure TLS 1.2 or later") }
        // One TLS 1.3 ticket per connection: authload's clients keep one session from each connection to resume.
        SSL_CTX_set_num_tickets(context, 1)
        if offersHTTP2 { authload_ssl_ctx_select_h2(context) }

        // The first certificate is the server's; any after it are the chain it sends (a self-signed one has none).
        let certificates = PEM.certificates(identity.certificatePEM)
        defer { for certificate in certificates { X509_free(certificate) } }
        guard let leaf = certificates.first else {
            throw TransportError(.tls, "the server certificate is not PEM (-----BEGIN CERTIFICATE-----)")
        }
        guard let key = PEM.privateKey(identity.privateKeyPEM) else {
            throw OpenSSLError.error("the server's private key is not PEM", fallback: "no key found")
        }
        defer { EVP_PKEY_free(key) }
        guard SSL_CTX_use_certificate(context, leaf) == 1 else { throw OpenSSLError.error("cannot use the server certificate") }
        for intermediate in certificates.dropFirst() where authload_ssl_ctx_add1_chain_cert(context, intermediate) != 1 {
            throw OpenSSLError.error("cannot send an intermediate certificate")
        }
        guard SSL_CTX_use_PrivateKey(context, key) == 1, SSL_CTX_check_private_key(context) == 1 else {
            throw OpenSSLError.error("the private key does not fit the server certificate")
        }
        if let clientAuthoritiesPEM {
            let authorities = PEM.certificates(clientAuthoritiesPEM)
            defer { for authority in authorities { X509_free(authority) } }
            guard !authorities.isEmpty else {
                throw TransportError(.tls, "the client certificate authorities are not PEM (-----BEGIN CERTIFICATE-----)")
            }
            let store = SSL_CTX_get_cert_store(context)
            for authority in authorities where X509_STORE_add_cert(store, authority) != 1 {
                throw OpenSSLError.error("cannot trust a client certificate authority")
            }
            SSL_CTX_set_verify(context, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nil)
        }
    }

    deinit {
        SSL_CTX_free(context)
    }

    /// A session that will accept the TLS handshake of the client connected on `fd`.
    func makeStream(fd: Int32) throws(TransportError) -> TLSStream {
        OpenSSLError.clear()
        guard let ssl = SSL_new(context) else { throw OpenSSLError.error("cannot start a TLS session") }
        guard SSL_set_fd(ssl, fd) == 1 else {
            SSL_free(ssl)
            throw OpenSSLError.error("cannot attach a TLS session to its socket")
        }
        SSL_set_accept_state(ssl)
        return TLSStream(fd: fd, ssl: ssl, role: .server)
    }
}
