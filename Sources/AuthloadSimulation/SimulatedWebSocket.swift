import AuthloadCore

/// Both ends of one in-process WebSocket of a simulated run: the client's connection, and the state the service's
/// peer writes. A receive waits for a message, the server's close or its timeout, on the ``SimulationClock``.
final class SimulatedWebSocket: WebSocketConnection {
    private struct State {
        var pipe = WebSocketPipe()
        /// The receive waiting for a message, if one is.
        var waiter: CheckedContinuation<Void, Never>?
        /// The timer that ends a wait at its deadline, kept across waits (see ``waitForMessage(until:)``).
        var timer: (deadline: SimulationClock.Instant, timer: SimulationClock.Timer)?
    }

    let clock: SimulationClock
    private let state = Locked(State())

    init(clock: SimulationClock) { self.clock = clock }

    func accept(handler: any WebSocketSessionHandler, subprotocol: String?) {
        state.withLock { $0.pipe.accept(handler: handler, subprotocol: subprotocol) }
    }

    var handshake: HTTPResponse { HTTPResponse(status: 101, reason: "Switching Protocols") }
    var subprotocol: String? { state.withLock { $0.pipe.subprotocol } }

    func send(_ message: WebSocketMessage) async throws {
        try state.withLock { state throws(WebSocketClosed) in try state.pipe.sessionForClientMessage() }?.received(message)
    }

    func receiveQueued(timeout: Duration) async throws -> ReceivedWebSocketMessage {
        let deadline = clock.now.advanced(by: timeout)
        while true {
            try Task.checkCancellation()
            let now = clock.now
            let next = state.withLock { $0.pipe.nextForClient(at: now) }
            switch next {
            case .success(let received): return received
            case .failure(let closed): throw closed
            case nil: break
            }
            guard now < deadline else { throw TransportError(.timeout, "no WebSocket message arrived within \(timeout)") }
            await waitForMessage(until: deadline)
        }
    }

    /// Returns when a message or the server's close arrives, at `deadline` (or sooner), or on cancellation.
    ///
    /// The timer that ends a wait is not called off when a message comes first: the next wait keeps it while it is
    /// due no later than its own deadline, and when it comes first, the receive finds nothing and waits again. A
    /// timer per wait, called off by each status message, left the clock's heap with more dead entries than live ones.
    private func waitForMessage(until deadline: SimulationClock.Instant) async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let (resumeNow, stale) = state.withLock { state -> (Bool, SimulationClock.Timer?) in
                    if state.pipe.hasNewsForClient || Task.isCancelled { return (true, nil) }
                    state.waiter = continuation
                    if let armed = state.timer, armed.deadline <= deadline { return (false, nil) }
                    let stale = state.timer?.timer
                    state.timer = (deadline, clock.schedule(at: deadline) { [self] in timerFired(deadline) })
                    return (false, stale)
                }
                if let stale { clock.cancel(stale) }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            wake()
        }
    }

    private func timerFired(_ deadline: SimulationClock.Instant) {
        state.withLock { state in
            if state.timer?.deadline == deadline { state.timer = nil }
        }
        wake()
    }

    private func wake() {
        state.withLock { state -> CheckedContinuation<Void, Never>? in
            defer { state.waiter = nil }
            return state.waiter
        }?.resume()
    }

    func close(code: Int, reason: String, timeout: Duration) async {
        state.withLock { $0.pipe.closeByClient(code: code, reason: reason) }?.closed(code: code)
        wake()
    }

    // MARK: The service's side

    func serverSend(_ message: WebSocketMessage) {
        let now = clock.now
        if state.withLock({ $0.pipe.deliverToClient(message, at: now) }) { wake() }
    }

    func serverClose(code: Int, reason: String) {
        // The client answers the close at once; the session hears the code it was closed with.
        state.withLock { $0.pipe.closeByServer(code: code, reason: reason) }?.closed(code: code)
        wake()
    }
}

/// The service's handle on a ``SimulatedWebSocket``.
struct SimulatedPeer: WebSocketPeer {
    let pipe: SimulatedWebSocket

    func send(_ message: WebSocketMessage) { pipe.serverSend(message) }
    func close(code: Int, reason: String) { pipe.serverClose(code: code, reason: reason) }
    func schedule(after delay: Duration, _ work: @escaping @Sendable () -> Void) {
        pipe.clock.schedule(at: pipe.clock.now.advanced(by: max(.zero, delay)), work)
    }
}
