import AuthloadCore
import AuthloadWire

/// What every client of one endpoint shares: where it is, how to reach it, and the `Host` its requests carry.
///
/// The socket transport makes one per endpoint and hands it to each ``ConnectionClient`` it makes. A client lives
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

    /// The address, when it is already known: the common case, answered without a suspension.
    var knownAddress: SocketAddress? { numericAddress ?? resolved.withLock { $0 } }

    /// Looks the host name up (off the event loops) and remembers the answer.
    func resolve(isolation: isolated (any Actor)? = #isolation) async throws(TransportError) -> SocketAddress {
        let address = try await resolver.resolve(host: endpoint.host, port: endpoint.port, isolation: isolation)
        resolved.withLock { $0 = address }
        return address
    }

    /// `host:port`, for the message when no local port is free; built only then.
    var target: String { "\(endpoint.host):\(endpoint.port)" }

    /// Wraps a connected socket: TLS for an https endpoint, plain TCP otherwise.
    func makeStream(_ fd: Int32) throws(TransportError) -> any ByteStream {
        endpoint.tls ? try tls.get().makeStream(fd: fd, host: endpoint.host) : PlainStream(fd: fd)
    }
}
