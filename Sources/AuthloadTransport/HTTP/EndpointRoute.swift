import AuthloadCore
import AuthloadWire

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

    /// Wraps a connected socket: TLS for an https endpoint, plain TCP otherwise.
    func makeStream(_ fd: Int32) throws(TransportError) -> any ByteStream {
        endpoint.tls ? try tls.get().makeStream(fd: fd, host: endpoint.host, port: endpoint.port) : PlainStream(fd: fd)
    }
}
