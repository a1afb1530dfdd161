/// Both ends of one in-process WebSocket, as state: what the client has yet to read, the session the client's messages
/// go to, and how each side closed.
///
/// The in-process transports (the tests' `InProcessHost`, the simulation's) keep it under their lock and differ only
/// in how a receive waits for the next message on their clock; the rules of who may still send and what a receive
/// sees live here once. Both clocks are virtual: generic over their instant, a simulation's every message went through
/// unspecialized code from its module (metadata look-ups for the inbox's array at every message).
public struct WebSocketPipe: Sendable {
    private var inbox: [(message: WebSocketMessage, arrived: VirtualInstant)] = []
    /// Set when the server closed: the client sees it once the inbox is drained.
    private var serverClose: WebSocketClosed?
    /// Set when the client closed or saw the server's close: nothing moves any more.
    private var closed: WebSocketClosed?
    private var handler: (any WebSocketSessionHandler)?
    public private(set) var subprotocol: String?

    public init() {}

    /// The service took the upgrade: its session hears the client from now on.
    public mutating func accept(handler: any WebSocketSessionHandler, subprotocol: String?) {
        self.handler = handler
        self.subprotocol = subprotocol
    }

    /// The session a client's message goes to; throws the close when either side has closed.
    public func sessionForClientMessage() throws(WebSocketClosed) -> (any WebSocketSessionHandler)? {
        if let closed = closed ?? serverClose { throw closed }
        return handler
    }

    /// What a receive at `now` gets: the oldest message (with the time it waited), the close once the inbox is drained,
    /// or nil when the client must wait for more.
    public mutating func nextForClient(at now: VirtualInstant) -> Result<ReceivedWebSocketMessage, WebSocketClosed>? {
        if !inbox.isEmpty {
            let (message, arrived) = inbox.removeFirst()
            return .success(ReceivedWebSocketMessage(message, queued: arrived.duration(to: now)))
        }
        if let closed { return .failure(closed) }
        if let serverClose {
            closed = serverClose
            return .failure(serverClose)
        }
        return nil
    }

    /// Whether a waiting receive has something to return (a message or a close).
    public var hasNewsForClient: Bool { !inbox.isEmpty || serverClose != nil || closed != nil }

    /// The client closes; returns the session to tell, the first time only.
    public mutating func closeByClient(code: Int, reason: String) -> (any WebSocketSessionHandler)? {
        guard closed == nil else { return nil }
        closed = WebSocketClosed(code: code, reason: reason)
        defer { handler = nil }
        return handler
    }

    /// The service sends `message` at `now`; false when either side has closed and it goes nowhere.
    public mutating func deliverToClient(_ message: WebSocketMessage, at now: VirtualInstant) -> Bool {
        guard closed == nil, serverClose == nil else { return false }
        inbox.append((message, now))
        return true
    }

    /// The service closes; returns the session to tell, the first time only (the client answers the close at once).
    public mutating func closeByServer(code: Int, reason: String) -> (any WebSocketSessionHandler)? {
        guard closed == nil, serverClose == nil else { return nil }
        serverClose = WebSocketClosed(code: code, reason: reason)
        defer { handler = nil }
        return handler
    }
}
