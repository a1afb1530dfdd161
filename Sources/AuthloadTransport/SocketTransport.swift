import AuthloadCore
import CSystem
import Foundation

/// The production transport: non-blocking sockets on a group of epoll event loops.
///
/// Each client gets a loop round-robin, so users spread evenly over cores.
///
/// ```swift
/// let loops = try EventLoopGroup(loops: 2)
/// let transport = SocketTransport(group: loops)
/// let client = transport.makeClient(for: Endpoint(host: "127.0.0.1", port: 8080))
/// let response = try await client.execute(HTTPRequest(method: "GET", target: "/"), timeout: .seconds(5))
/// ```
public final class SocketTransport: Transport {
    private let group: EventLoopGroup
    private let resolver = Resolver()
    private let configuration: SocketTransportConfiguration
    private let tls: LazyTLSClientContext
    private let pool: Locked<[Endpoint: ConnectionPool]>?
    /// With a `shared` policy and HTTP/2 possible, one HTTP/2 pool per endpoint (its HTTP/1.1 pool inside).
    private let http2Pools = Locked<[Endpoint: HTTP2Client]>([:])
    private let poolSize: Int
    private let sources: SourceAddresses
    /// One route per endpoint, searched in order: a profile names a few endpoints, and with connections per flow
    /// iteration every iteration asks for its route, where hashing the endpoint's host name cost more than the search.
    private let routes = Locked<[EndpointRoute]>([])

    /// With a `shared` connection policy, every client for an endpoint borrows from one pool of its size instead of
    /// holding its own connection.
    public init(group: EventLoopGroup, configuration: SocketTransportConfiguration = SocketTransportConfiguration()) {
        self.group = group
        self.configuration = configuration
        self.tls = LazyTLSClientContext(configuration: configuration.tls)
        self.sources = SourceAddresses(configuration.connections.sourceAddresses)
        self.pool = configuration.connections.poolSize == nil ? nil : Locked([:])
        self.poolSize = configuration.connections.poolSize ?? 0
    }

    /// Users are spread over the loops; each user runs on its loop (see `EventLoop+Executor.swift`).
    public func executor(forUser user: Int) -> (any SerialExecutor & TaskExecutor)? { loop(forUser: user) }

    public var userThreads: Int? { group.loops.count }

    public func isSaturated(forUser user: Int) -> Bool { loop(forUser: user).isSaturated }

    public func timer(forUser user: Int) -> (any LoopTimer)? { loop(forUser: user) }

    /// The loop that carries user number `user`: the one its task runs on, and so the one whose saturation decides.
    private func loop(forUser user: Int) -> EventLoop { group.loops[user % group.loops.count] }

    public func makeClient(for endpoint: Endpoint) -> any HTTPClient {
        let http2 =
            switch configuration.connections.http {
            case .http1: false
            case .http2: true
            // Once the endpoint is known to speak only HTTP/1.1, its clients are HTTP/1.1 ones, with no HTTP/2 client's
            // step in front of every request.
            case .auto: endpoint.tls && route(to: endpoint).usesHTTP2
            }
        return http2 ? makeHTTP2Client(for: endpoint) : makeHTTP1Client(for: endpoint)
    }

    /// One TLS handshake with `endpoint` before the load (``TLSProbe``), offering by ALPN what the run's connections
    /// will: a certificate every connection would fail over is then reported once, at the start; and under
    /// `target.http` "auto", a server that does not choose h2 is known to speak only HTTP/1.1 before the first client
    /// is made, so a shared pool's requests go straight to HTTP/1.1 connections.
    ///
    /// - Returns: why TLS failed, when it did for a reason a ``TLSFailure`` names; nil otherwise (a target that
    ///   refuses or does not answer is left for the run, which reports it per request).
    public func probeTLS(_ endpoint: Endpoint, timeout: Duration) async -> TLSFailure? {
        let auto = configuration.connections.http == .auto
        let outcome = await TLSProbe.handshake(
            connectingTo: endpoint, configuration: configuration.tls, offering: auto ? ["h2", "http/1.1"] : [], timeout: timeout)
        if auto, outcome.completed, outcome.failure == nil, outcome.negotiatedProtocol != "h2" {
            route(to: endpoint).learnedServerSpeaksOnlyHTTP1()
        }
        return outcome.failure
    }

    private func makeHTTP1Client(for endpoint: Endpoint) -> any HTTPClient {
        guard let pool else {
            // A user running on a loop keeps its connection there: its requests then take no thread hop.
            return SingleConnectionClient(loop: group.current ?? group.next(), route: route(to: endpoint))
        }
        return pool.withLock { pools in
            if let existing = pools[endpoint] { return existing }
            let route = route(to: endpoint)
            let created = ConnectionPool(size: poolSize) { [group] in SingleConnectionClient(loop: group.next(), route: route) }
            pools[endpoint] = created
            return created
        }
    }

    /// A client that sends on HTTP/2 while its route does (see ``HTTP2Client``): one lane on the user's loop, or the
    /// endpoint's shared pool of `poolSize` lanes over every loop.
    private func makeHTTP2Client(for endpoint: Endpoint) -> any HTTPClient {
        let route = route(to: endpoint)
        guard pool != nil else {
            let loop = group.current ?? group.next()
            return HTTP2Client(
                route: route, lanes: [HTTP2Lane(loop: loop, route: route)],
                http1: SingleConnectionClient(loop: loop, route: route), ownsConnections: true)
        }
        return http2Pools.withLock { pools in
            if let existing = pools[endpoint] { return existing }
            let lanes = (0..<poolSize).map { index in HTTP2Lane(loop: group.loops[index % group.loops.count], route: route) }
            let created = HTTP2Client(route: route, lanes: lanes, http1: makeHTTP1Client(for: endpoint), ownsConnections: false)
            pools[endpoint] = created
            return created
        }
    }

    /// The endpoint's one route, made the first time a client asks for it.
    private func route(to endpoint: Endpoint) -> EndpointRoute {
        routes.withLock { routes in
            if let known = routes.first(where: { $0.endpoint == endpoint }) { return known }
            let route = EndpointRoute(endpoint: endpoint, resolver: resolver, configuration: configuration, tls: tls, sources: sources)
            routes.append(route)
            return route
        }
    }
}
