import AuthloadCore
import AuthloadTesting

/// A client WebSocket whose server side is a script: messages that arrive at set instants of a manual
/// clock, and replies to what the client sends. Waiting for a message moves the clock to its arrival,
/// or by the whole timeout when none is due, so time-dependent client code runs exactly and at once.
final class ScriptedSocket: WebSocketConnection {
    private struct State {
        var scheduled: [(at: ManualClock.Instant, message: WebSocketMessage)] = []
        var closeAt: (at: ManualClock.Instant, closed: WebSocketClosed)?
        var sent: [WebSocketMessage] = []
        var closedByClient: Int?
    }

    let clock: ManualClock
    /// Answers each client message with messages that arrive at once.
    let reply: @Sendable (String) -> [String]
    private let state = Locked(State())

    init(clock: ManualClock, reply: @escaping @Sendable (String) -> [String] = { _ in [] }) {
        self.clock = clock
        self.reply = reply
    }

    var handshake: HTTPResponse { HTTPResponse(status: 101) }
    var subprotocol: String? { nil }

    /// Text the client sent, in order.
    var sentTexts: [String] {
        state.withLock { $0.sent.map { if case .text(let text) = $0 { text } else { "<binary>" } } }
    }

    var closedByClient: Int? { state.withLock { $0.closedByClient } }

    /// `text` arrives `delay` from now.
    func arrive(_ text: String, after delay: Duration = .zero) {
        let at = clock.now.advanced(by: delay)
        state.withLock { $0.scheduled.append((at, .text(text))) }
    }

    /// The server closes the socket `delay` from now, after what arrived before.
    func serverCloses(_ code: Int, after delay: Duration = .zero) {
        let at = clock.now.advanced(by: delay)
        state.withLock { $0.closeAt = (at, WebSocketClosed(code: code)) }
    }

    func send(_ message: WebSocketMessage) async throws {
        let now = clock.now
        let replies = try state.withLock { state throws(WebSocketClosed) -> [String] in
            if let close = state.closeAt, close.at <= now { throw close.closed }
            state.sent.append(message)
            guard case .text(let text) = message else { return [] }
            return reply(text)
        }
        state.withLock { state in
            for text in replies { state.scheduled.append((now, .text(text))) }
        }
    }

    func receiveQueued(timeout: Duration) async throws -> ReceivedWebSocketMessage {
        let now = clock.now
        let deadline = now.advanced(by: timeout)
        let next = state.withLock { state -> (ManualClock.Instant, WebSocketMessage)? in
            guard let index = state.scheduled.indices.min(by: { state.scheduled[$0].at < state.scheduled[$1].at }) else { return nil }
            return state.scheduled[index].at <= deadline ? state.scheduled.remove(at: index) : nil
        }
        let close = state.withLock { $0.closeAt }
        if let close, close.at <= (next?.0 ?? deadline) {
            clock.advance(to: max(now, close.at))
            throw close.closed
        }
        guard let (at, message) = next else {
            clock.advance(to: deadline)
            throw TransportError(.timeout)
        }
        // A message due before now waited in the queue; one due later is waited for.
        if at > now { clock.advance(to: at) }
        return ReceivedWebSocketMessage(message, queued: max(.zero, at.duration(to: now)))
    }

    func close(code: Int, reason: String, timeout: Duration) async {
        state.withLock { $0.closedByClient = code }
    }
}
