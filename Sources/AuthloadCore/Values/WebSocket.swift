/// A whole WebSocket data message, as an application sends and receives it.
///
/// Control frames (ping, pong, close) never appear here: the transport answers pings itself and
/// reports a close as ``WebSocketClosed``.
public enum WebSocketMessage: Sendable, Hashable {
    case text(String)
    case binary([UInt8])
}

/// How a WebSocket ended: the close code and reason the peer sent, or a code reported locally.
///
/// Thrown by ``WebSocketConnection/receive(timeout:)`` and ``WebSocketConnection/send(_:)`` once the
/// socket is closed. Codes follow RFC 6455 §7.4: 1005 when the peer's close frame carried no code,
/// 1006 when the connection dropped without a close frame.
public struct WebSocketClosed: Error, Sendable, Hashable, CustomStringConvertible {
    public var code: Int
    public var reason: String

    public init(code: Int, reason: String = "") {
        self.code = code
        self.reason = reason
    }

    /// The connection dropped without a closing handshake.
    public static let abnormal = 1006
    /// The peer's close frame carried no status code.
    public static let noStatus = 1005

    public var description: String { reason.isEmpty ? "websocket closed \(code)" : "websocket closed \(code): \(reason)" }
}

/// The server answered the opening handshake with something other than `101 Switching Protocols`.
///
/// The socket never opened; `response` is what the server sent (e.g. 403, 503), with its timing.
public struct WebSocketUpgradeRejected: Error, Sendable, Hashable, CustomStringConvertible {
    public var response: HTTPResponse

    public init(response: HTTPResponse) { self.response = response }

    public var description: String { "websocket handshake rejected with \(response.status) \(response.reason)" }
}

/// One open client WebSocket, owned by one virtual user.
///
/// The transport masks what the client sends, reassembles fragments, answers pings, and answers a
/// close from the server. Messages that arrive while nobody is receiving are queued in order.
///
/// ```swift
/// let socket = try await client.openWebSocket(HTTPRequest(method: "GET", target: "/ws"),
///                                             protocols: ["v12.stomp"], timeout: .seconds(5))
/// try await socket.send(.text("CONNECT\naccept-version:1.2\n\n\0"))
/// let reply = try await socket.receive(timeout: .seconds(5))
/// await socket.close(code: 1000, reason: "", timeout: .seconds(1))
/// ```
public protocol WebSocketConnection: Sendable {
    /// The server's `101` response, with the handshake's timing (connect, TLS, first byte, total).
    ///
    /// Its status line and timing only: the transport checks the header fields (`Sec-WebSocket-Accept`, the
    /// sub-protocol, which ``subprotocol`` keeps) and does not keep them for the socket's life.
    var handshake: HTTPResponse { get }

    /// The subprotocol the server selected from those offered, if any.
    var subprotocol: String? { get }

    /// Sends one whole message.
    ///
    /// - Throws: ``WebSocketClosed`` when the socket has closed; ``TransportError`` on a socket error.
    func send(_ message: WebSocketMessage) async throws

    /// The next message, waiting at most `timeout` for it, with how long it had already waited in the queue.
    ///
    /// The message arrived `queued` before this call returned — earlier still when it came while nobody
    /// was receiving (the flow was busy with a REST call): a flow that times events subtracts it instead
    /// of passing the wait for server time.
    ///
    /// - Throws: ``TransportError`` of kind `.timeout` when none came in time (the socket stays open);
    ///   ``WebSocketClosed`` once the socket closed (every later call throws it too);
    ///   `CancellationError` when the calling task is cancelled.
    func receiveQueued(timeout: Duration) async throws -> ReceivedWebSocketMessage

    /// Sends a close frame and waits at most `timeout` for the server's close, then drops the connection.
    func close(code: Int, reason: String, timeout: Duration) async

    /// Hands every message to `consumer` until it says it is done, sending what it asks and waiting as long as it says.
    ///
    /// For a wait that spans many messages (a status stream held for a minute): a transport with a loop of its own
    /// runs `consumer` there as each message is read, and the calling task is suspended once, not once a message; the
    /// default receives message by message on the calling task. Messages queued before the call come first.
    ///
    /// - Throws: what ``receiveQueued(timeout:)`` and ``send(_:)`` throw, except a receive's timeout, which the
    ///   consumer hears as a turn without a message.
    func consume(_ consumer: any WebSocketMessageConsumer) async throws

    /// `consumer`'s run on the transport's own loop, with no task waiting for it, ready to start; nil when the
    /// transport has no loop of its own (then ``consume(_:)`` runs it on a task).
    ///
    /// For a flow that hands a long wait to the engine (``FlowHold``): a task suspended for a minute keeps the memory of
    /// every frame it ever stacked, a consumption only its own few fields.
    func consumption(of consumer: any WebSocketMessageConsumer) -> (any WebSocketConsumption)?
}

/// A consumer run on a socket's loop without a task waiting for it (``WebSocketConnection/consumption(of:)``).
public protocol WebSocketConsumption: Sendable {
    /// Starts handing messages to the consumer, as ``WebSocketConnection/consume(_:)`` does; `done` is called once,
    /// on the socket's loop, with what `consume` would have returned or thrown.
    func start(then done: @escaping @Sendable (Result<Void, any Error>) -> Void)

    /// Ends the consumption early with `error`, as cancelling the task in ``WebSocketConnection/consume(_:)`` does with
    /// `CancellationError`; before ``start(then:)``, the start ends at once with `error`. Once done, it does nothing.
    func stop(_ error: any Error)
}

/// Reads a socket's messages as ``WebSocketConnection/consume(_:)`` hands them over: a state machine that says, after
/// each message or each wait that ended without one, what to do next.
///
/// `Sendable` because a transport may call it on its own thread; it is called by one thread at a time, never
/// concurrently, and the task that handed it over is suspended until the transport is done with it.
public protocol WebSocketMessageConsumer: AnyObject, Sendable {
    /// What to do next, given the message just read; nil at the start, after a send, and after a wait that ended
    /// without a message.
    func next(after received: ReceivedWebSocketMessage?) -> WebSocketConsumerStep
}

/// What a ``WebSocketMessageConsumer`` asks of its socket.
public enum WebSocketConsumerStep: Sendable, Equatable {
    /// Wait at most this long for a message, then ask again.
    case wait(Duration)
    /// Send this message, then ask again.
    case send(WebSocketMessage)
    /// Done: ``WebSocketConnection/consume(_:)`` returns.
    case finish
}

extension WebSocketConnection {
    /// None: a transport without a loop of its own runs a consumer on the caller's task (``consume(_:)``).
    public func consumption(of consumer: any WebSocketMessageConsumer) -> (any WebSocketConsumption)? { nil }

    /// Message by message on the calling task, with ``receiveQueued(timeout:)`` and ``send(_:)``.
    public func consume(_ consumer: any WebSocketMessageConsumer) async throws {
        var received: ReceivedWebSocketMessage?
        while true {
            switch consumer.next(after: received) {
            case .finish:
                return
            case .send(let message):
                try await send(message)
                received = nil
            case .wait(let timeout):
                do {
                    received = try await receiveQueued(timeout: timeout)
                } catch let error as TransportError where error.kind == .timeout {
                    received = nil
                }
            }
        }
    }
}

extension WebSocketConnection {
    /// The next message, waiting at most `timeout` for it; see ``receiveQueued(timeout:)`` for what it throws.
    public func receive(timeout: Duration) async throws -> WebSocketMessage {
        try await receiveQueued(timeout: timeout).message
    }
}

/// A message as ``WebSocketConnection/receiveQueued(timeout:)`` hands it over.
public struct ReceivedWebSocketMessage: Sendable, Hashable {
    public var message: WebSocketMessage
    /// How long ago the transport read the message: the time it sat in the queue because nobody was
    /// receiving, and the time the receiving task took to wake up.
    public var queued: Duration

    public init(_ message: WebSocketMessage, queued: Duration = .zero) {
        self.message = message
        self.queued = queued
    }
}
