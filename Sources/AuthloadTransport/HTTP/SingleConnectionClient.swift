import AuthloadCore
import AuthloadWire

/// One simulated device's HTTP connection to one endpoint, kept alive between its requests.
///
/// Its connection lives on one event loop and is touched only there (hence `@unchecked Sendable`:
/// `connection`, `cancelled` and `webSockets` are read and written on `loop` alone). Callers on any
/// task go through ``execute(_:timeout:isolation:)``, which starts the request at once when the caller
/// runs on the loop, and hops onto it otherwise. What every client of the endpoint shares is in its ``EndpointRoute``,
/// so a client made for one flow iteration costs little more than its connection.
final class SingleConnectionClient: HTTPClient, @unchecked Sendable {
    private let loop: EventLoop
    private let route: EndpointRoute
    private var connection: HTTPClientConnection?
    private var cancelled = false
    /// WebSockets this client opened, dropped by ``shutdown()`` if still open; weak so closed ones go.
    private var webSockets: [WeakWebSocket] = []

    init(loop: EventLoop, route: EndpointRoute) {
        self.loop = loop
        self.route = route
    }

    // Inlined, with `send`, into the pool's `execute`: each async call level costs executor checks that
    // take the task's status lock (the user's task prefers the loop).
    @inline(__always)
    func execute(_ request: HTTPRequest, timeout: Duration, isolation: isolated (any Actor)?) async throws -> HTTPResponse {
        let address = try await route.readyAddress(isolation: isolation)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(256 + request.body.count)
        request.serialize(into: &bytes, host: route.hostHeader)
        do {
            return try await send(bytes, method: request.method, address: address, timeout: timeout, isolation: isolation)
        } catch let error as TransportError where error.reason == .staleConnection {
            return try await send(bytes, method: request.method, address: address, timeout: timeout, isolation: isolation)
        }
    }

    @inline(__always)
    private func send(
        _ bytes: [UInt8], method: String, address: SocketAddress, timeout: Duration,
        isolation: isolated (any Actor)?
    ) async throws -> HTTPResponse {
        try Task.checkCancellation()
        let start = MonotonicInstant.now
        let deadline = start + timeout
        let connectDeadline = start + min(timeout, route.configuration.connectTimeout)
        // The runtime's entry point without an isolation parameter: it runs on the caller's executor as it is, where the
        // one taking `isolation` checks the executor on entry and on return, and each check takes the task's status lock
        // (the user's task prefers its loop); two of the ten a request took, about 1.5 % of its CPU.
        return try await _unsafeInheritExecutor_withTaskCancellationHandler(
            operation: {
                try await withUnsafeThrowingContinuation(isolation: isolation) {
                    (continuation: UnsafeContinuation<HTTPResponse, any Error>) in
                    let request = PendingRequest(bytes: bytes, continuation: continuation)
                    // A user whose actor runs on this loop (see `EventLoop+Executor.swift`) starts its request at once.
                    if loop.inLoop {
                        startOnLoop(
                            request, method: method, address: address, at: start, deadline: deadline, connectDeadline: connectDeadline)
                    } else {
                        loop.execute {
                            self.startOnLoop(
                                request, method: method, address: address, at: start, deadline: deadline, connectDeadline: connectDeadline)
                        }
                    }
                }
            },
            onCancel: {
                loop.execute { self.cancelOnLoop() }
            })
    }

    private func startOnLoop(
        _ request: PendingRequest, method: String, address: SocketAddress, at start: MonotonicInstant,
        deadline: MonotonicInstant, connectDeadline: MonotonicInstant
    ) {
        if cancelled {
            request.fail(CancellationError())
            return
        }
        let connection: HTTPClientConnection
        if let idle = self.connection, idle.isIdle {
            connection = idle
        } else {
            self.connection?.close()
            do {
                connection = try HTTPClientConnection(
                    loop: loop, address: address, source: route.sources, target: route.target,
                    idleTimeout: route.configuration.idleTimeout, makeStream: route.makeStream
                ) { [weak self] closed in
                    if self?.connection === closed { self?.connection = nil }
                }
            } catch {
                request.fail(error)
                return
            }
            self.connection = connection
        }
        connection.send(request, method: method, start: start, deadline: deadline, connectDeadline: connectDeadline)
    }

    private func cancelOnLoop() {
        cancelled = true
        connection?.close(failing: TransportError(.cancelled))
    }

    func openWebSocket(_ request: HTTPRequest, protocols: [String], timeout: Duration) async throws -> any WebSocketConnection {
        let address = try await route.readyAddress()
        try Task.checkCancellation()
        let key = WebSocketHandshake.makeKey()
        var bytes: [UInt8] = []
        WebSocketHandshake.makeRequest(extending: request, host: route.hostHeader, key: key, protocols: protocols)
            .serialize(into: &bytes, host: route.hostHeader)
        let start = MonotonicInstant.now
        let upgrade = WebSocketClientConnection.Upgrade(
            bytes: bytes, key: key, protocols: protocols, start: start,
            deadline: start + timeout,
            connectDeadline: start + min(timeout, route.configuration.connectTimeout),
            timeout: timeout)
        let opening = Locked<WebSocketClientConnection?>(nil)
        return try await loop.suspend { (opener: LoopWaiter<WebSocketHandle>) in
            do {
                let connection = try WebSocketClientConnection(
                    loop: self.loop, address: address, source: self.route.sources, target: self.route.target, upgrade: upgrade,
                    opener: opener, makeStream: self.route.makeStream)
                opening.withLock { $0 = connection }
                self.webSockets.removeAll { $0.connection == nil || $0.connection?.closure != nil }
                self.webSockets.append(WeakWebSocket(connection: connection))
            } catch {
                opener.resume(.failure(error))
            }
        } onCancel: { _ in
            // Closing the half-open socket resumes the opener with the cancellation.
            opening.withLock { $0 }?.fail(CancellationError())
        }
    }

    /// Closes the connection and any WebSocket: at once on the loop's own thread (a user's task, whose next
    /// iteration must not find the connection still open), through the loop otherwise.
    func shutdown() {
        if loop.inLoop {
            closeAll()
        } else {
            loop.execute { self.closeAll() }
        }
    }

    private func closeAll() {
        connection?.close(reset: true)
        for webSocket in webSockets { webSocket.connection?.abort() }
        webSockets = []
    }
}

/// A client's weak hold on a WebSocket it opened.
private struct WeakWebSocket {
    weak var connection: WebSocketClientConnection?
}
