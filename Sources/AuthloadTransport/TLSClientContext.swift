import AuthloadCore
import COpenSSL

/// How a client checks the servers it speaks TLS to.
public struct TLSClientConfiguration: Sendable, Equatable {
    /// Accepts any certificate, unchecked (`SSL_VERIFY_NONE`): for staging servers with self-signed
    /// certificates. Off by default; a profile turns it on with `target.insecureSkipTLSVerify`.
    public var insecureSkipVerify: Bool
    /// PEM certificates trusted besides the system store, e.g. a test server's self-signed one.
    public var trustedCertificatesPEM: [String]

    public init(insecureSkipVerify: Bool = false, trustedCertificatesPEM: [String] = []) {
        self.insecureSkipVerify = insecureSkipVerify
        self.trustedCertificatesPEM = trustedCertificatesPEM
    }
}

/// One OpenSSL client context (`SSL_CTX`) that every TLS connection of a transport starts from.
///
/// It holds the trust store, loaded once: the system's (`SSL_CTX_set_default_verify_paths`) plus any
/// extra certificates. Each connection then checks the certificate names its own host (by name, or by
/// address for a numeric host) and sends that name as SNI. TLS 1.2 is the oldest version offered.
///
/// `@unchecked Sendable`: the `SSL_CTX` is configured in `init` and never changed after; OpenSSL allows
/// `SSL_new` on a configured context from any thread.
public final class TLSClientContext: @unchecked Sendable {
    public let configuration: TLSClientConfiguration
    private let context: OpaquePointer

    /// - Throws: `TransportError(.tls)` when OpenSSL cannot create the context or an extra
    ///   certificate is not PEM.
    public init(configuration: TLSClientConfiguration = TLSClientConfiguration()) throws(TransportError) {
        OpenSSLError.clear()
        guard let context = SSL_CTX_new(TLS_client_method()) else {
            throw OpenSSLError.error("cannot create a TLS client context")
        }
        self.context = context
        self.configuration = configuration
        guard authload_ssl_ctx_configure(context) == 1 else { throw OpenSSLError.error("cannot configure TLS 1.2 or later") }
        if configuration.insecureSkipVerify {
            SSL_CTX_set_verify(context, SSL_VERIFY_NONE, nil)
            return
        }
        SSL_CTX_set_verify(context, SSL_VERIFY_PEER, nil)
        guard SSL_CTX_set_default_verify_paths(context) == 1 else {
            throw OpenSSLError.error("cannot load the system's trusted certificates")
        }
        let store = SSL_CTX_get_cert_store(context)
        for (index, pem) in configuration.trustedCertificatesPEM.enumerated() {
            let certificates = PEM.certificates(pem)
            defer { for certificate in certificates { X509_free(certificate) } }
            guard !certificates.isEmpty else {
                throw TransportError(.tls, "trusted certificate \(index + 1) holds no PEM certificate (-----BEGIN CERTIFICATE-----)")
            }
            for certificate in certificates where X509_STORE_add_cert(store, certificate) != 1 {
                let reasons = OpenSSLError.drain()
                // The same certificate given twice is no error.
                if reasons.contains(where: { $0.contains("already in hash table") }) { continue }
                throw TransportError(.tls, "cannot trust certificate \(index + 1): \(reasons.joined(separator: "; "))")
            }
        }
    }

    deinit {
        SSL_CTX_free(context)
    }

    /// A session that will connect on `fd` to `host` (a name or a numeric address, as in the URL).
    func makeStream(fd: Int32, host: String) throws(TransportError) -> TLSStream {
        OpenSSLError.clear()
        guard let ssl = SSL_new(context) else { throw OpenSSLError.error("cannot start a TLS session") }
        let numeric = SocketAddress(numericHost: host, port: 0) != nil
        var configured = SSL_set_fd(ssl, fd) == 1
        if configured && !configuration.insecureSkipVerify {
            configured = numeric ? X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), host) == 1 : SSL_set1_host(ssl, host) == 1
        }
        // SNI carries names only (RFC 6066 forbids addresses).
        if configured && !numeric { configured = authload_ssl_set_server_name(ssl, host) == 1 }
        guard configured else {
            SSL_free(ssl)
            throw OpenSSLError.error("cannot set up a TLS session for \(host)")
        }
        SSL_set_connect_state(ssl)
        return TLSStream(fd: fd, ssl: ssl, verifiedPeer: configuration.insecureSkipVerify ? nil : host)
    }
}

/// Creates a transport's client context on first use, so a run against plain HTTP never loads the
/// trust store, and keeps the result (a failure too: it would fail the same way again).
final class LazyTLSClientContext: Sendable {
    private let configuration: TLSClientConfiguration
    private let state = Locked<Result<TLSClientContext, TransportError>?>(nil)

    init(configuration: TLSClientConfiguration) {
        self.configuration = configuration
    }

    func get() throws(TransportError) -> TLSClientContext {
        let result = state.withLock { state -> Result<TLSClientContext, TransportError> in
            if let state { return state }
            let created = Result { () throws(TransportError) in try TLSClientContext(configuration: configuration) }
            state = created
            return created
        }
        return try result.get()
    }

    /// Whether ``get()`` has been called: then it answers at once.
    var isLoaded: Bool { state.withLock { $0 != nil } }

    /// Loads the context on Swift's global pool, not where the caller runs: reading the trust store
    /// takes milliseconds, and a virtual user's task runs on an event loop. Check ``isLoaded`` first.
    func load() async throws(TransportError) {
        let result = await withTaskExecutorPreference(globalConcurrentExecutor, isolation: nil) {
            Result { () throws(TransportError) in try self.get() }
        }
        _ = try result.get()
    }
}
