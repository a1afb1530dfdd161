import AuthloadCore

/// The caller's handle on an open client WebSocket; every call hops onto the connection's loop.
///
/// Only the connection: a handle this small lives inside the `any WebSocketConnection` that holds it, where one with the
/// handshake in it took an allocation of its own for the socket's life.
struct WebSocketHandle: WebSocketConnection {
    let connection: WebSocketClientConnection

    var handshake: HTTPResponse { connection.opened.handshake }
    var subprotocol: String? { connection.opened.subprotocol }

    /// Queues the message on the loop and returns without waiting for it to be written.
    ///
    /// Not waiting for the loop saves a task suspension and wake-up per message (measured: about a
    /// third of the CPU of an echo round trip). Messages from one task still go out in order, before
    /// anything it does next on the socket. A socket already known to be closed throws at once; one
    /// that closes while the message is on its way drops it, and the next receive reports the closure.
    func send(_ message: WebSocketMessage) async throws {
        let connection = self.connection
        if let closure = connection.sharedClosure.withLock({ $0 }) { throw closure }
        connection.loop.execute { try? connection.send(message) }
    }

    func receiveQueued(timeout: Duration) async throws -> ReceivedWebSocketMessage {
        let connection = self.connection
        let deadline = MonotonicInstant.now + timeout
        let stamped = try await connection.loop.suspend { waiter in
            connection.receive(waiter, deadline: deadline, timeout: timeout)
        } onCancel: { waiter in
            waiter.resume(.failure(CancellationError()))
            connection.pruneReceivers()
        }
        return ReceivedWebSocketMessage(stamped.message, queued: MonotonicInstant.now - stamped.arrived)
    }

    func consume(_ consumer: any WebSocketMessageConsumer) async throws {
        let connection = self.connection
        try await connection.loop.suspend { waiter in
            connection.consume(consumer) { waiter.resume($0) }
        } onCancel: { waiter in
            connection.stopConsumer(consumer, CancellationError())
        }
    }

    func consumption(of consumer: any WebSocketMessageConsumer) -> (any WebSocketConsumption)? {
        LoopConsumption(connection: connection, consumer: consumer)
    }

    func close(code: Int, reason: String, timeout: Duration) async {
        let connection = self.connection
        let deadline = MonotonicInstant.now + timeout
        // Not cancellable: a closing handshake is bounded by its timeout and should not be left half done.
        await withCheckedContinuation { continuation in
            connection.loop.execute {
                connection.close(code: code, reason: reason, deadline: deadline, continuation: continuation)
            }
        }
    }
}

/// A consumer run on its socket's loop with no task waiting for it (``WebSocketHandle/consumption(of:)``).
///
/// `@unchecked Sendable`: `stopped` is touched on the connection's loop alone (both calls hop there).
private final class LoopConsumption: WebSocketConsumption, @unchecked Sendable {
    let connection: WebSocketClientConnection
    let consumer: any WebSocketMessageConsumer
    /// Why it was stopped before it started.
    private var stopped: (any Error)?
    private var started = false

    init(connection: WebSocketClientConnection, consumer: any WebSocketMessageConsumer) {
        self.connection = connection
        self.consumer = consumer
    }

    func start(then done: @escaping @Sendable (Result<Void, any Error>) -> Void) {
        connection.loop.execute { [self] in
            started = true
            if let stopped { return done(.failure(stopped)) }
            connection.consume(consumer, then: done)
        }
    }

    func stop(_ error: any Error) {
        connection.loop.execute { [self] in
            guard started else {
                stopped = error
                return
            }
            connection.stopConsumer(consumer, error)
        }
    }
}
