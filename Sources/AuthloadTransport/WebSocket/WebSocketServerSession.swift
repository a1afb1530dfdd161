import AuthloadCore
import AuthloadWire

/// The server side of a WebSocket upgrade: checks the handshake, asks the ``WebSocketService``, and
/// ties the accepted session's handler to its frame connection.
enum WebSocketServerHandshake {
    enum Outcome {
        /// Write this response (101) and switch the connection to frames.
        case accept(HTTPResponse)
        /// Write this response, then close the connection.
        case reject(HTTPResponse)
    }

    /// How long a client has to answer the server's Close before the socket is dropped.
    static let closeTimeout = Duration.seconds(5)

    /// Decides an upgrade request; on acceptance `frames` gets the session handler as its delegate.
    ///
    /// `frames` exists before the service is asked, so a message the service sends from inside
    /// `upgrade(…)` is queued behind the 101 instead of being lost.
    static func negotiate(_ request: HTTPRequest, service: any HTTPService, frames: WebSocketFrameConnection) -> Outcome {
        guard let webSockets = service as? any WebSocketService else {
            return .reject(textResponse(404, "no WebSocket endpoint at \(request.path): this server does not accept WebSocket upgrades"))
        }
        var accepted: HTTPResponse
        switch WebSocketHandshake.accept(request: request) {
        case .failure(let error): return .reject(WebSocketHandshake.rejection(for: error))
        case .success(let response): accepted = response
        }
        let offered = WebSocketHandshake.offeredProtocols(in: request)
        switch webSockets.upgrade(request, offeredProtocols: offered, peer: ServerWebSocketPeer(frames: frames)) {
        case .reject(let response):
            return .reject(response)
        case .accept(let handler, let subprotocol):
            if let subprotocol {
                guard offered.contains(subprotocol) else {
                    return .reject(
                        textResponse(500, "the WebSocket service selected sub-protocol '\(subprotocol)', which the client did not offer"))
                }
                accepted.headers.add("Sec-WebSocket-Protocol", subprotocol)
            }
            frames.delegate = WebSocketServerSession(handler: handler)
            return .accept(accepted)
        }
    }

    private static func textResponse(_ status: Int, _ text: String) -> HTTPResponse {
        HTTPResponse(status: status, headers: ["Content-Type": "text/plain; charset=utf-8"], body: Array("\(text)\n".utf8))
    }
}

/// Passes one accepted session's messages and its end to the service's handler, on the loop, in order.
final class WebSocketServerSession: WebSocketFrameConnectionDelegate {
    let handler: any WebSocketSessionHandler
    private var ended = false

    init(handler: any WebSocketSessionHandler) { self.handler = handler }

    func received(_ message: WebSocketMessage) {
        guard !ended else { return }
        handler.received(message)
    }

    func closed(_ closed: WebSocketClosed) {
        guard !ended else { return }
        ended = true
        handler.closed(code: closed.code)
    }
}

/// A service's handle on one accepted socket.
///
/// Calls made on the loop's own thread (from the handler, or from a scheduled callback) act at once,
/// so a reply is written in the same turn; calls from other threads hop onto the loop. Once the
/// socket has closed every call does nothing, and work scheduled for later is skipped.
///
/// `@unchecked Sendable`: `frames` is a weak reference read only on `loop`'s thread; off it, `loop` is asked only
/// ``ConnectionLoop/inLoop`` and ``ConnectionLoop/execute(_:)``, which every loop answers from any thread.
final class ServerWebSocketPeer: WebSocketPeer, @unchecked Sendable {
    private let loop: any ConnectionLoop
    private weak var frames: WebSocketFrameConnection?

    init(frames: WebSocketFrameConnection) {
        self.loop = frames.loop
        self.frames = frames
    }

    func send(_ message: WebSocketMessage) {
        onLoop { frames in
            // A socket that is closing drops late messages, as the protocol promises.
            try? frames.send(message)
        }
    }

    func close(code: Int, reason: String) {
        onLoop { frames in
            frames.close(
                code: code, reason: reason,
                deadline: frames.loop.now + WebSocketServerHandshake.closeTimeout)
        }
    }

    func schedule(after delay: Duration, _ work: @escaping @Sendable () -> Void) {
        onLoop { frames in
            _ = frames.loop.schedule(at: frames.loop.now + delay) { [weak frames] in
                guard let frames, !frames.isClosed else { return }
                work()
            }
        }
    }

    private func onLoop(_ body: @escaping @Sendable (WebSocketFrameConnection) -> Void) {
        if loop.inLoop {
            if let frames, !frames.isClosed { body(frames) }
        } else {
            loop.execute { [self] in
                if let frames, !frames.isClosed { body(frames) }
            }
        }
    }
}
