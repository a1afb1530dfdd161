import AuthloadCore
import AuthloadWire
import Synchronization

/// What every client of one endpoint shares: where it is, how to reach it, and the `Host` its requests carry.
///
/// The socket transport makes one per endpoint and hands it to each ``SingleConnectionClient`` it makes. A client lives
/// as long as its connections do, which is one flow iteration by default; worked out per client, the address
/// lookup and the `Host` header cost every iteration a resolver call, a cache key and a lock of their own.
final class EndpointRoute: Sendable {
    let endpoint: Endpoint
    /// Built once: building it per request showed in the profile.
    let hostHeader: String
    let configuration: SocketTransportConfiguration
    let tls: LazyTLSClientContext
    let sources: SourceAddresses?
    private let resolver: Resolver
    /// A numeric host's address, known from the start and read without a lock by every request.
    private let numericAddress: SocketAddress?
    /// A host name's address once looked up.
    private let resolved = Locked<SocketAddress?>(nil)
    /// With `target.http` "auto" over TLS: a connection found that the server did not agree to h2 by ALPN, so requests
    /// go on HTTP/1.1 from now on. A server is taken to answer every connection alike; until one has answered,
    /// requests try HTTP/2.
    private let speaksOnlyHTTP1 = Atomic<Bool>(false)

    init(
        endpoint: Endpoint, resolver: Resolver, configuration: SocketTransportConfiguration, tls: LazyTLSClientContext,
        sources: SourceAddresses?
    ) {
        self.endpoint = endpoint
        self.hostHeader = endpoint.hostHeader
        self.configuration = configuration
        self.tls = tls
        self.sources = sources
        self.resolver = resolver
        self.numericAddress = SocketAddress(numericHost: endpoint.host, port: endpoint.port)
    }

    /// The address to connect to, once an https endpoint's trust store is loaded. Both are done off the event loops
    /// the first time; every later request finds them known and goes on without a suspension.
    ///
    /// Inlined into the client's `execute`: each async call level costs executor checks on a request's path.
    @inline(__always)
    func readyAddress(isolation: isolated (any Actor)? = #isolation) async throws(TransportError) -> SocketAddress {
        if endpoint.tls, !tls.isLoaded { try await tls.load() }
        if let known = numericAddress ?? resolved.withLock({ $0 }) { return known }
        let address = try await resolver.resolve(host: endpoint.host, port: endpoint.port, isolation: isolation)
        resolved.withLock { $0 = address }
        return address
    }

    /// `host:port`, for the message when no local port is free; built only then.
    var target: String { "\(endpoint.host):\(endpoint.port)" }

    /// Wraps a connected socket for HTTP/1.1 (and WebSockets): TLS offering only `http/1.1` by ALPN for an https
    /// endpoint, plain TCP otherwise.
    func makeStream(_ fd: Int32) throws(TransportError) -> any ByteStream {
        endpoint.tls
            ? try tls.get().makeStream(fd: fd, host: endpoint.host, port: endpoint.port, protocols: ["http/1.1"]) : PlainStream(fd: fd)
    }

    /// Wraps a connected socket for HTTP/2: TLS offering `h2`, then `http/1.1`, by ALPN, so a server without HTTP/2
    /// still completes the handshake and the connection can say which it chose; plain TCP for h2c.
    func makeHTTP2Stream(_ fd: Int32) throws(TransportError) -> any ByteStream {
        endpoint.tls
            ? try tls.get().makeStream(fd: fd, host: endpoint.host, port: endpoint.port, protocols: ["h2", "http/1.1"])
            : PlainStream(fd: fd)
    }

    /// The `:scheme` of the endpoint's HTTP/2 requests.
    var scheme: String { endpoint.tls ? "https" : "http" }

    /// Whether requests to the endpoint travel on HTTP/2 now: `target.http` "2", or "auto" over TLS until a server
    /// refused h2. Plain http under "auto" stays on HTTP/1.1, as a client with no prior knowledge of h2c does.
    var usesHTTP2: Bool {
        switch configuration.connections.http {
        case .http1: false
        case .http2: true
        case .auto: endpoint.tls && !speaksOnlyHTTP1.load(ordering: .relaxed)
        }
    }

    /// Whether a connection that found no h2 by ALPN hands its requests back for HTTP/1.1, rather than failing them.
    var fallsBackToHTTP1: Bool { configuration.connections.http == .auto }

    /// A connection found the server does not agree to h2: HTTP/1.1 from now on.
    func learnedServerSpeaksOnlyHTTP1() { speaksOnlyHTTP1.store(true, ordering: .relaxed) }
}
