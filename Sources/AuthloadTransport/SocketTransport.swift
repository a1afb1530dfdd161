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

    /// The loop that carries user number `user`: the one its task runs on, and so the one whose saturation decides.
    private func loop(forUser user: Int) -> EventLoop { group.loops[user % group.loops.count] }

    public func makeClient(for endpoint: Endpoint) -> any HTTPClient {
        guard let pool else {
            // A user running on a loop keeps its connection there: its requests then take no thread hop.
            return ConnectionClient(loop: group.current ?? group.next(), route: route(to: endpoint))
        }
        return pool.withLock { pools in
            if let existing = pools[endpoint] { return existing }
            let route = route(to: endpoint)
            let created = ConnectionPool(size: poolSize) { [group] in ConnectionClient(loop: group.next(), route: route) }
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

/// A fixed set of connections that requests take turns on; a request waits in line for a free one.
final class ConnectionPool: HTTPClient {
    private struct State {
        var idle: [ConnectionClient]
        var waiters = FIFOQueue<CheckedContinuation<ConnectionClient, Never>>()
    }

    private let state: Locked<State>
    private let make: @Sendable () -> ConnectionClient

    init(size: Int, make: @escaping @Sendable () -> ConnectionClient) {
        self.make = make
        state = Locked(State(idle: (0..<size).map { _ in make() }))
    }

    /// The wait for a free connection counts in the request's timing and its timeout: it is time the user
    /// waits, and timing from the send alone would hide a queue (coordinated omission). A free connection is
    /// taken without a continuation or a look at the clock; only a request that must wait in line makes one and
    /// measures its wait.
    func execute(_ request: HTTPRequest, timeout: Duration, isolation: isolated (any Actor)?) async throws -> HTTPResponse {
        let client: ConnectionClient
        var waited = Duration.zero
        if let idle = state.withLock({ $0.idle.popLast() }) {
            client = idle
        } else {
            let handedOff = ContinuousClock.now
            client = await acquire(isolation: isolation)
            waited = handedOff.duration(to: .now)
        }
        defer { release(client) }
        guard waited < timeout else { throw TransportError(.timeout) }
        var response = try await client.execute(request, timeout: timeout - waited, isolation: isolation)
        response.timing.timeToFirstByte += waited
        response.timing.total += waited
        return response
    }

    /// A WebSocket holds its connection for its whole life, so it gets one of its own, outside the pool.
    func openWebSocket(_ request: HTTPRequest, protocols: [String], timeout: Duration) async throws -> any WebSocketConnection {
        try await make().openWebSocket(request, protocols: protocols, timeout: timeout)
    }

    /// Pooled connections outlive any one user's flow.
    func shutdown() {}

    private func acquire(isolation: isolated (any Actor)?) async -> ConnectionClient {
        await withCheckedContinuation(isolation: isolation) { continuation in
            let client = state.withLock { state -> ConnectionClient? in
                if let client = state.idle.popLast() { return client }
                state.waiters.append(continuation)
                return nil
            }
            if let client { continuation.resume(returning: client) }
        }
    }

    private func release(_ client: ConnectionClient) {
        let waiter = state.withLock { state -> CheckedContinuation<ConnectionClient, Never>? in
            if state.waiters.isEmpty {
                state.idle.append(client)
                return nil
            }
            return state.waiters.popFirst()
        }
        waiter?.resume(returning: client)
    }
}

/// The event loops of a process: one per core by default, shared by the client and the server side.
public final class EventLoopGroup: Sendable {
    public let loops: [EventLoop]
    private let counter = Locked(0)

    public init(loops count: Int = System.coreCount) throws(TransportError) {
        Sockets.raiseFileLimit()
        var loops: [EventLoop] = []
        for index in 0..<max(1, count) { loops.append(try EventLoop(name: "authload-loop-\(index)")) }
        self.loops = loops
    }

    /// The loop whose thread this is, if any.
    var current: EventLoop? { loops.first { $0.inLoop } }

    /// The next loop, round-robin.
    public func next() -> EventLoop {
        loops[
            counter.withLock { value in
                defer { value = (value + 1) % loops.count }
                return value
            }]
    }

    /// Stops every loop and waits until their threads have closed their sockets and released their
    /// connections, so a process that exits next does not tear its runtime down under a loop still
    /// releasing thousands of them (a run of 15,000 WebSockets once ended in SIGABRT after its report).
    public func shutdown() {
        for loop in loops { loop.shutdown() }
        for loop in loops { loop.waitUntilStopped() }
    }
}

/// Facts about the machine the generator runs on.
public enum System {
    /// The CPUs this process may use (a `taskset` narrows it), so loops match the cores actually there.
    public static var coreCount: Int { max(1, Int(authload_available_cpus())) }

    /// Raises the open-file limit to the hard limit and returns the new limit.
    @discardableResult
    public static func raiseFileLimit() -> Int { Sockets.raiseFileLimit() }
}
