import AuthloadCore
import AuthloadWire
import Synchronization

/// One HTTP/2 connection's place on one event loop: the connection now in use there, made again when it closes or
/// the server says GOAWAY, and how many requests go through it.
///
/// A per-user client has one lane, a shared pool one per pooled connection. The connection is touched on `loop`
/// only (hence `@unchecked Sendable`); ``load`` and ``capacity`` are atomics a pool reads from any thread to choose
/// a lane.
final class HTTP2Lane: @unchecked Sendable {
    let loop: EventLoop
    private let route: EndpointRoute
    private var connection: HTTP2ClientConnection?
    /// Requests handed to this lane and not yet answered.
    let load = Atomic<Int>(0)
    /// The server's SETTINGS_MAX_CONCURRENT_STREAMS on the lane's connection; 100 (RFC 9113's suggested least)
    /// until it says.
    let capacity = Atomic<Int>(100)

    init(loop: EventLoop, route: EndpointRoute) {
        self.loop = loop
        self.route = route
    }

    /// Sends one request on the lane's connection, as one attempt: the caller decides what to do with a stream
    /// the server refused, or with a server that speaks only HTTP/1.1.
    ///
    /// - Parameter start: when the caller handed the request over; its latency counts from there, across attempts.
    func send(
        _ fields: [HPACKHeader], body: [UInt8], address: SocketAddress, start: MonotonicInstant, deadline: MonotonicInstant,
        isolation: isolated (any Actor)?
    ) async throws -> HTTPResponse {
        try Task.checkCancellation()
        load.add(1, ordering: .relaxed)
        defer { load.subtract(1, ordering: .relaxed) }
        let connectDeadline = min(deadline, MonotonicInstant.now + route.configuration.connectTimeout)
        let exchange = HTTP2Exchange(fields: fields, body: body, start: start, deadline: deadline, connectDeadline: connectDeadline)
        return try await withTaskCancellationHandler(
            operation: {
                try await withUnsafeThrowingContinuation(isolation: isolation) { continuation in
                    exchange.waiter = .continuation(continuation)
                    if loop.inLoop {
                        startOnLoop(exchange, address: address)
                    } else {
                        loop.execute { self.startOnLoop(exchange, address: address) }
                    }
                }
            },
            onCancel: {
                loop.execute {
                    exchange.cancelled = true
                    exchange.connection?.cancel(exchange)
                }
            }, isolation: isolation)
    }

    private func startOnLoop(_ exchange: HTTP2Exchange, address: SocketAddress) {
        if exchange.cancelled {
            exchange.finish(.failure(CancellationError()))
            return
        }
        if connection?.takesRequests != true {
            do {
                let opened = try HTTP2ClientConnection(loop: loop, address: address, route: route, events: events)
                try opened.register()
                connection = opened
            } catch {
                exchange.finish(.failure(error))
                return
            }
        }
        connection?.send(exchange)
    }

    private var events: HTTP2ClientConnection.Events {
        HTTP2ClientConnection.Events(
            closed: { [weak self] closed in self?.forget(closed) },
            goingAway: { [weak self] leaving in self?.forget(leaving) },
            capacityChanged: { [weak self] streams in self?.capacity.store(streams, ordering: .relaxed) })
    }

    private func forget(_ connection: HTTP2ClientConnection) {
        if self.connection === connection { self.connection = nil }
    }

    /// Closes the connection: at once on the loop's own thread, through the loop otherwise.
    func shutdown() {
        if loop.inLoop {
            connection?.close(reset: true)
        } else {
            loop.execute { self.connection?.close(reset: true) }
        }
    }
}
