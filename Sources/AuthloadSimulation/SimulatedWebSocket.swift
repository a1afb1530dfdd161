import AuthloadCore

/// Both ends of one in-process WebSocket of a simulated run: the client's connection, and the state the service's
/// peer writes. A receive waits for a message, the server's close or its timeout, on the ``SimulationClock``.
///
/// A consumer (``consumption(of:)``, ``consume(_:)``) runs where the service sends: each status message goes to it
/// inside the clock's timer that pushed it, as a real socket's loop hands it over as it reads, rather than by resuming
/// a task that then receives it.
final class SimulatedWebSocket: WebSocketConnection {
    private struct State {
        var pipe = WebSocketPipe()
        /// The receive waiting for a message, if one is.
        var waiter: CheckedContinuation<Void, Never>?
        /// The timer that ends a wait at its deadline, kept across waits (see ``arm(_:until:)``).
        var timer: (deadline: SimulationClock.Instant, timer: SimulationClock.Timer)?
        /// The consumer the socket runs, from its start to its end.
        var consumer: Consumer?
    }

    /// A consumer's run, and the end of the wait it asked for while it waits (nil while it runs).
    private struct Consumer {
        let consumer: any WebSocketMessageConsumer
        let done: @Sendable (Result<Void, any Error>) -> Void
        var waitsUntil: SimulationClock.Instant?
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
        try deliverToServer(message)
    }

    /// Hands a client's message to the service's session, at once.
    private func deliverToServer(_ message: WebSocketMessage) throws {
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
    private func waitForMessage(until deadline: SimulationClock.Instant) async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let (resumeNow, stale) = state.withLock { state -> (Bool, SimulationClock.Timer?) in
                    if state.pipe.hasNewsForClient || Task.isCancelled { return (true, nil) }
                    state.waiter = continuation
                    return (false, arm(&state, until: deadline))
                }
                if let stale { clock.cancel(stale) }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            wake()
        }
    }

    /// Makes sure a timer fires by `deadline`; returns the timer it replaces, to cancel outside the lock.
    ///
    /// The timer that ends a wait is not called off when a message comes first: the next wait keeps it while it is
    /// due no later than its own deadline, and when it comes first, the wait finds nothing and waits again. A timer
    /// per wait, called off by each status message, left the clock's heap with more dead entries than live ones.
    private func arm(_ state: inout State, until deadline: SimulationClock.Instant) -> SimulationClock.Timer? {
        if let armed = state.timer, armed.deadline <= deadline { return nil }
        let stale = state.timer?.timer
        state.timer = (deadline, clock.schedule(at: deadline) { [self] in timerFired(deadline) })
        return stale
    }

    private func timerFired(_ deadline: SimulationClock.Instant) {
        let now = clock.now
        // A consumer whose wait is over goes on; one that waits longer gets a timer for its own deadline.
        let (due, stale) = state.withLock { state -> (Consumer?, SimulationClock.Timer?) in
            if state.timer?.deadline == deadline { state.timer = nil }
            guard let until = state.consumer?.waitsUntil else { return (nil, nil) }
            guard until <= now else { return (nil, arm(&state, until: until)) }
            state.consumer?.waitsUntil = nil
            return (state.consumer, nil)
        }
        if let stale { clock.cancel(stale) }
        wake()
        if due != nil { drive(nil) }
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
        notifyConsumer()
    }

    // MARK: Consumers

    func consumption(of consumer: any WebSocketMessageConsumer) -> (any WebSocketConsumption)? {
        SimulatedConsumption(socket: self, consumer: consumer)
    }

    /// Waits once for the whole exchange, not once a message.
    func consume(_ consumer: any WebSocketMessageConsumer) async throws {
        let consumption = SimulatedConsumption(socket: self, consumer: consumer)
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                consumption.start { continuation.resume(with: $0) }
            }
        } onCancel: {
            consumption.stop(CancellationError())
        }
    }

    /// Makes `consumer` the socket's, to run from ``drive(_:)`` on; false when the socket has one already.
    fileprivate func register(_ consumer: any WebSocketMessageConsumer, then done: @escaping @Sendable (Result<Void, any Error>) -> Void)
        -> Bool
    {
        state.withLock { state in
            guard state.consumer == nil else { return false }
            state.consumer = Consumer(consumer: consumer, done: done, waitsUntil: nil)
            return true
        }
    }

    /// Takes `consumer` off the socket if it still runs here, and returns what to call with its end.
    fileprivate func unregister(_ consumer: any WebSocketMessageConsumer) -> (@Sendable (Result<Void, any Error>) -> Void)? {
        state.withLock { state in
            guard let running = state.consumer, running.consumer === consumer else { return nil }
            state.consumer = nil
            return running.done
        }
    }

    /// Asks the consumer what next after `received`, and does it, until it waits or is done.
    ///
    /// Whatever the service sends while the consumer runs (an answer to its send) waits in the inbox for its next wait.
    fileprivate func drive(_ received: ReceivedWebSocketMessage?) {
        var received = received
        while let consumer = state.withLock({ $0.consumer?.consumer }) {
            switch consumer.next(after: received) {
            case .finish:
                return endConsumer(.success(()))
            case .send(let message):
                do {
                    try deliverToServer(message)
                } catch {
                    return endConsumer(.failure(error))
                }
                received = nil
            case .wait(let timeout):
                switch waitAsConsumer(timeout) {
                case .message(let message): received = message
                case .closed(let closed): return endConsumer(.failure(closed))
                case .nothing: received = nil
                case .waiting: return
                }
            }
        }
    }

    /// What a consumer's wait comes to at once.
    private enum Waited {
        case message(ReceivedWebSocketMessage)
        case closed(WebSocketClosed)
        /// A wait of no time ended with no message, as a receive's does.
        case nothing
        /// It waits for a message, a close or its timer.
        case waiting
    }

    private func waitAsConsumer(_ timeout: Duration) -> Waited {
        let now = clock.now
        let deadline = now.advanced(by: timeout)
        let (waited, stale) = state.withLock { state -> (Waited, SimulationClock.Timer?) in
            switch state.pipe.nextForClient(at: now) {
            case .success(let message): return (.message(message), nil)
            case .failure(let closed): return (.closed(closed), nil)
            case nil: break
            }
            guard now < deadline else { return (.nothing, nil) }
            state.consumer?.waitsUntil = deadline
            return (.waiting, arm(&state, until: deadline))
        }
        if let stale { clock.cancel(stale) }
        return waited
    }

    /// Hands what came (a message, a close) to a consumer that waits for it.
    private func notifyConsumer() {
        let now = clock.now
        let next = state.withLock { state -> Result<ReceivedWebSocketMessage, WebSocketClosed>? in
            guard state.consumer?.waitsUntil != nil else { return nil }
            guard let next = state.pipe.nextForClient(at: now) else { return nil }
            state.consumer?.waitsUntil = nil
            return next
        }
        switch next {
        case .success(let message): drive(message)
        case .failure(let closed): endConsumer(.failure(closed))
        case nil: break
        }
    }

    private func endConsumer(_ result: Result<Void, any Error>) {
        let ended = state.withLock { state -> Consumer? in
            defer { state.consumer = nil }
            return state.consumer
        }
        ended?.done(result)
    }

    // MARK: The service's side

    func serverSend(_ message: WebSocketMessage) {
        let now = clock.now
        guard state.withLock({ $0.pipe.deliverToClient(message, at: now) }) else { return }
        wake()
        notifyConsumer()
    }

    func serverClose(code: Int, reason: String) {
        // The client answers the close at once; the session hears the code it was closed with.
        state.withLock { $0.pipe.closeByServer(code: code, reason: reason) }?.closed(code: code)
        wake()
        notifyConsumer()
    }
}

/// A consumer run where the simulated socket's service sends, with no task waiting for it.
///
/// A class so that a stop before the start is remembered; its state is under a lock because the run may cancel it
/// from another thread.
private final class SimulatedConsumption: WebSocketConsumption {
    let socket: SimulatedWebSocket
    let consumer: any WebSocketMessageConsumer
    /// Whether it started, and why it was stopped before it did.
    private let phase = Locked<(started: Bool, stopped: (any Error)?)>((false, nil))

    init(socket: SimulatedWebSocket, consumer: any WebSocketMessageConsumer) {
        self.socket = socket
        self.consumer = consumer
    }

    func start(then done: @escaping @Sendable (Result<Void, any Error>) -> Void) {
        // Registered under the phase's lock, so that a stop from another thread finds it or is seen here.
        let refusal = phase.withLock { phase -> (any Error)? in
            phase.started = true
            if let stopped = phase.stopped { return stopped }
            return socket.register(consumer, then: done) ? nil : TransportError(.other, "the WebSocket already has a consumer")
        }
        if let refusal { return done(.failure(refusal)) }
        socket.drive(nil)
    }

    func stop(_ error: any Error) {
        let done = phase.withLock { phase -> (@Sendable (Result<Void, any Error>) -> Void)? in
            guard phase.started else {
                phase.stopped = error
                return nil
            }
            return socket.unregister(consumer)
        }
        done?(.failure(error))
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
