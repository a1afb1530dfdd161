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
    /// Requests made on the loop's thread this round, handed to the connection together in the next: their HEADERS
    /// then go out in one write, where one per request cost a TLS record and a syscall each.
    private var batch: [(exchange: HTTP2Exchange, address: SocketAddress)] = []
    private var batchScratch: [(exchange: HTTP2Exchange, address: SocketAddress)] = []
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
                        batch.append((exchange, address))
                        if batch.count == 1 { loop.execute { self.startBatch() } }
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

    /// Hands over the requests batched this round, then settles each connection they went to once.
    private func startBatch() {
        swap(&batch, &batchScratch)
        var touched: HTTP2ClientConnection?
        for (exchange, address) in batchScratch {
            guard let used = startOnLoop(exchange, address: address, settling: false) else { continue }
            if let touched, touched !== used { touched.settle() }
            touched = used
        }
        batchScratch.removeAll(keepingCapacity: true)
        touched?.settle()
    }

    /// Hands one request to the lane's connection, opened first when there is none that takes requests.
    ///
    /// - Returns: the connection it went to; nil when it was finished here.
    @discardableResult
    private func startOnLoop(_ exchange: HTTP2Exchange, address: SocketAddress, settling: Bool = true) -> HTTP2ClientConnection? {
        if exchange.cancelled {
            exchange.finish(.failure(CancellationError()))
            return nil
        }
        if connection?.takesRequests != true {
            do {
                let opened = try HTTP2ClientConnection(loop: loop, address: address, route: route, events: events)
                try opened.register()
                connection = opened
            } catch {
                exchange.finish(.failure(error))
                return nil
            }
        }
        connection?.send(exchange, settling: settling)
        return connection
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
