import AuthloadCore

/// The caller's handle on an open client WebSocket; every call hops onto the connection's loop.
struct WebSocketHandle: WebSocketConnection {
    let handshake: HTTPResponse
    let subprotocol: String?
    let connection: WebSocketClientConnection

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
            connection.consume(consumer, waiter: waiter)
        } onCancel: { waiter in
            connection.stopConsumer(of: waiter, CancellationError())
        }
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
