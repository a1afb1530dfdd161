import AuthloadCore
import COpenSSL

/// A TLS setting that OpenSSL cannot use, and which one: the caller knows where it came from (a file, a
/// profile key) and says so.
public struct TLSConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Part: Sendable, Equatable {
        /// The ``TLSClientConfiguration/trustedCertificatesPEM`` entry at this index.
        case trustedCertificates(index: Int)
        case clientCertificate
        case clientKey
    }

    public var part: Part
    /// What is wrong with it, e.g. `holds no PEM certificate (-----BEGIN CERTIFICATE-----)`.
    public var problem: String

    public init(_ part: Part, _ problem: String) {
        self.part = part
        self.problem = problem
    }

    public var description: String {
        switch part {
        case .trustedCertificates(let index): "trusted certificate \(index + 1) \(problem)"
        case .clientCertificate: "the client certificate \(problem)"
        case .clientKey: "the client key \(problem)"
        }
    }
}

/// One OpenSSL client context (`SSL_CTX`) that every TLS connection of a transport starts from.
///
/// It holds the trust store, loaded once: the system's (`SSL_CTX_set_default_verify_paths`) plus any
/// extra certificates. Each connection then checks the certificate names its own host (by name, or by
/// address for a numeric host) and sends that name as SNI. TLS 1.2 is the oldest version offered. A new
/// connection resumes a session an earlier one to the same server was given (``TLSSessionCache``), unless the
/// configuration says not to (``TLSClientConfiguration/resumeSessions``).
///
/// `@unchecked Sendable`: the `SSL_CTX` is configured in `init` and never changed after; OpenSSL allows
/// `SSL_new` on a configured context from any thread.
public final class TLSClientContext: @unchecked Sendable {
    public let configuration: TLSClientConfiguration
    private let context: OpaquePointer
    /// Sessions servers gave this context's connections, for the next connection to each to resume.
    let sessions = TLSSessionCache()

    /// - Throws: `TransportError(.tls)` when OpenSSL cannot create the context or a certificate or key of the
    ///   configuration is unusable (``check(_:)`` says which).
    public init(configuration: TLSClientConfiguration = TLSClientConfiguration()) throws(TransportError) {
        OpenSSLError.clear()
        guard let context = SSL_CTX_new(TLS_client_method()) else {
            throw OpenSSLError.error("cannot create a TLS client context")
        }
        self.context = context
        self.configuration = configuration
        guard authload_ssl_ctx_configure(context) == 1 else { throw OpenSSLError.error("cannot configure TLS 1.2 or later") }
        // One recv takes every record that has arrived, not a header and then its body: half the reads of a response,
        // and a read loop that drains several records in one readiness event (`TLSStream.hasBufferedInput`).
        SSL_CTX_ctrl(context, SSL_CTRL_SET_READ_AHEAD, 1, nil)
        do throws(TLSConfigurationError) { try Self.useClientCertificate(configuration, in: context) } catch {
            throw TransportError(.tls, error.description)
        }
        if configuration.skipsCertificateVerification {
            SSL_CTX_set_verify(context, SSL_VERIFY_NONE, nil)
            return
        }
        SSL_CTX_set_verify(context, SSL_VERIFY_PEER, nil)
        if configuration.trustsSystemRoots {
            guard SSL_CTX_set_default_verify_paths(context) == 1 else {
                throw OpenSSLError.error("cannot load the system's trusted certificates")
            }
        }
        do throws(TLSConfigurationError) { try Self.trust(configuration.trustedCertificatesPEM, in: SSL_CTX_get_cert_store(context)) } catch
        {
            throw TransportError(.tls, error.description)
        }
    }

    /// Parses every certificate and key of `configuration` as ``init(configuration:)`` would, without loading
    /// the system's store, so a caller can refuse a bad file before any connection and name it.
    public static func check(_ configuration: TLSClientConfiguration) throws(TLSConfigurationError) {
        OpenSSLError.clear()
        guard let context = SSL_CTX_new(TLS_client_method()) else {
            throw TLSConfigurationError(.clientCertificate, "cannot be checked: \(OpenSSLError.drain().joined(separator: "; "))")
        }
        defer { SSL_CTX_free(context) }
        try useClientCertificate(configuration, in: context)
        try trust(configuration.trustedCertificatesPEM, in: SSL_CTX_get_cert_store(context))
    }

    /// Adds `bundles` to `store`. Any certificate given is a trust anchor, root or not: a staging stack often
    /// hands out its issuing CA rather than its root, and a chain that reaches it verifies (as curl does).
    private static func trust(_ bundles: [String], in store: OpaquePointer?) throws(TLSConfigurationError) {
        if !bundles.isEmpty { X509_STORE_set_flags(store, UInt(X509_V_FLAG_PARTIAL_CHAIN)) }
        for (index, pem) in bundles.enumerated() {
            let certificates = PEM.certificates(pem)
            defer { for certificate in certificates { X509_free(certificate) } }
            guard !certificates.isEmpty else {
                throw TLSConfigurationError(.trustedCertificates(index: index), PEM.noCertificateProblem(pem))
            }
            for certificate in certificates where X509_STORE_add_cert(store, certificate) != 1 {
                let reasons = OpenSSLError.drainReasons()
                // The same certificate given twice is no error.
                if reasons.contains(where: { $0.library == ERR_LIB_X509 && $0.code == X509_R_CERT_ALREADY_IN_HASH_TABLE }) { continue }
                throw TLSConfigurationError(
                    .trustedCertificates(index: index), "cannot be trusted: \(reasons.map(\.text).joined(separator: "; "))")
            }
        }
    }

    /// Sets the certificate, its chain and its key that the client sends when a server asks for one.
    private static func useClientCertificate(_ configuration: TLSClientConfiguration, in context: OpaquePointer)
        throws(TLSConfigurationError)
    {
        guard let certificatePEM = configuration.clientCertificatePEM else { return }
        let certificates = PEM.certificates(certificatePEM)
        defer { for certificate in certificates { X509_free(certificate) } }
        guard let leaf = certificates.first else {
            throw TLSConfigurationError(.clientCertificate, PEM.noCertificateProblem(certificatePEM))
        }
        guard SSL_CTX_use_certificate(context, leaf) == 1 else {
            throw TLSConfigurationError(.clientCertificate, "cannot be used: \(OpenSSLError.drain().joined(separator: "; "))")
        }
        for intermediate in certificates.dropFirst() where authload_ssl_ctx_add1_chain_cert(context, intermediate) != 1 {
            throw TLSConfigurationError(
                .clientCertificate, "has an intermediate that cannot be used: \(OpenSSLError.drain().joined(separator: "; "))")
        }
        guard let keyPEM = configuration.clientKeyPEM else { throw TLSConfigurationError(.clientKey, "is missing") }
        let key: OpaquePointer
        switch PEM.privateKeyOrProblem(keyPEM) {
        case .success(let parsed): key = parsed
        case .failure(let problem): throw TLSConfigurationError(.clientKey, problem.text)
        }
        defer { EVP_PKEY_free(key) }
        guard SSL_CTX_use_PrivateKey(context, key) == 1, SSL_CTX_check_private_key(context) == 1 else {
            OpenSSLError.clear()
            throw TLSConfigurationError(.clientKey, "does not fit the client certificate")
        }
    }

    deinit {
        SSL_CTX_free(context)
    }

    /// A session that will connect on `fd` to `host` (a name or a numeric address, as in the URL) at `port`, resuming
    /// one an earlier connection to the same name and port was given when there is one and resumption is on.
    ///
    /// - Parameter protocols: what ALPN offers, most wanted first (`["h2", "http/1.1"]`); the server's choice is the
    ///   stream's ``TLSStream/negotiatedProtocol`` once the handshake is done. Empty: no ALPN extension at all.
    func makeStream(fd: Int32, host: String, port: Int, protocols: [String] = []) throws(TransportError) -> TLSStream {
        OpenSSLError.clear()
        guard let ssl = SSL_new(context) else { throw OpenSSLError.error("cannot start a TLS session") }
        // A server name set for the host stands in for it, in SNI and in the check alike.
        let name = configuration.serverNames[host] ?? host
        let numeric = SocketAddress(numericHost: name, port: 0) != nil
        var configured = SSL_set_fd(ssl, fd) == 1
        if configured && !configuration.skipsCertificateVerification {
            configured = numeric ? X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), name) == 1 : SSL_set1_host(ssl, name) == 1
        }
        // SNI carries names only (RFC 6066 forbids addresses).
        if configured && !numeric { configured = authload_ssl_set_server_name(ssl, name) == 1 }
        if configured && !protocols.isEmpty {
            let wire = Self.alpnWire(protocols)
            // Unlike most of OpenSSL, 0 is success here.
            configured = wire.withUnsafeBufferPointer { SSL_set_alpn_protos(ssl, $0.baseAddress, UInt32($0.count)) } == 0
        }
        guard configured else {
            SSL_free(ssl)
            throw OpenSSLError.error("cannot set up a TLS session for \(name)")
        }
        let key = TLSSessionCache.key(name: name, port: port)
        let resumes = configuration.resumeSessions
        if resumes, let session = sessions.take(for: key) {
            // A session the server no longer accepts costs nothing: the handshake goes on as a full one.
            _ = SSL_set_session(ssl, session)
            SSL_SESSION_free(session)
        }
        SSL_set_connect_state(ssl)
        return TLSStream(
            fd: fd, ssl: ssl, role: .client(verifiedPeer: configuration.skipsCertificateVerification ? nil : name, name: name),
            sendsCertificate: configuration.clientCertificatePEM != nil, resumption: resumes ? (sessions, key) : nil)
    }
}

extension TLSClientContext {
    /// The ALPN protocol list as TLS carries it (RFC 7301 §3.1): each name preceded by its length.
    static func alpnWire(_ protocols: [String]) -> [UInt8] {
        protocols.flatMap { [UInt8(clamping: $0.utf8.count)] + Array($0.utf8) }
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
