/// The WebSocket side of a staging service, the same behind a socket or in process.
///
/// The host (the socket server, or `SimulatedTransport` in AuthloadTesting) checks the RFC 6455 handshake, then asks the
/// service whether to accept. An accepted session hears every data message through its handler and
/// talks back through its ``WebSocketPeer``; the host does the framing, pings and closing handshake.
public protocol WebSocketService: Sendable {
    /// Decides on an upgrade request that passed the protocol checks.
    ///
    /// - Parameters:
    ///   - request: the client's `GET` with its target and headers.
    ///   - offeredProtocols: the `Sec-WebSocket-Protocol` values the client offered, in order.
    ///   - peer: the handle for talking to this client once accepted; keep it to push messages later.
    func upgrade(_ request: HTTPRequest, offeredProtocols: [String], peer: any WebSocketPeer) -> WebSocketUpgrade
}

/// A service's answer to an upgrade request.
public enum WebSocketUpgrade: Sendable {
    /// Switch protocols; `handler` hears the session, `subprotocol` is echoed (it must be one offered).
    case accept(handler: any WebSocketSessionHandler, subprotocol: String?)
    /// Refuse with this response (e.g. 403, 503); the connection then closes.
    case reject(HTTPResponse)
}

/// A service's handle on one accepted client socket. Every method may be called from any thread.
public protocol WebSocketPeer: Sendable {
    /// Sends a message unless the socket has closed (then it is dropped silently).
    func send(_ message: WebSocketMessage)

    /// Starts the closing handshake with `code`; the host drops the connection after the client answers.
    func close(code: Int, reason: String)

    /// Runs `work` after `delay` on the host's time base: a loop timer on a socket, the injected clock
    /// in process. This is how a service paces a status stream without owning a thread or a task.
    func schedule(after delay: Duration, _ work: @escaping @Sendable () -> Void)
}

/// Hears one accepted session. Calls for one session never overlap and come in order.
public protocol WebSocketSessionHandler: Sendable {
    /// A whole data message from the client.
    func received(_ message: WebSocketMessage)

    /// The session ended: the client closed with `code`, or the connection dropped (1006). Called once.
    func closed(code: Int)
}
