import AuthloadCore
import AuthloadWire

/// A STOMP 1.2 session over one client WebSocket (docs/protocols.md, STOMP), owned by one flow iteration.
///
/// It connects and negotiates heart-beats, subscribes, hands over frames in the order they arrived
/// (several frames in one WebSocket message and one frame split over several both work), sends
/// heart-beats while it waits, and disconnects with a receipt. Every wait is bounded by a deadline on
/// the flow's clock. A server `ERROR` frame is thrown, since the server closes after it.
///
/// ```swift
/// var stomp = StompClient(socket: socket, clock: context.clock)
/// try await stomp.connect(.connect(), until: deadline)
/// try await stomp.subscribe(destination: "/user/queue", id: "/user/queue", until: deadline)
/// let status = try await stomp.next(until: deadline)   // a MESSAGE, with when it arrived
/// await stomp.disconnect(until: deadline)
/// ```
struct StompClient<C: Clock>: Sendable where C.Duration == Duration {
    typealias Received = StompSession<C.Instant>.Received

    let socket: any WebSocketConnection
    let clock: C
    private var session: StompSession<C.Instant>

    init(socket: any WebSocketConnection, clock: C) {
        self.socket = socket
        self.clock = clock
        session = StompSession(now: clock.now)
    }

    /// What both sides agreed in CONNECT/CONNECTED; nothing is sent or expected until then.
    var heartBeat: StompHeartBeat.Negotiated { session.heartBeat }

    /// Sends `frame` (a CONNECT or STOMP) and waits for CONNECTED, then starts the negotiated heart-beats.
    ///
    /// - Returns: the CONNECTED frame.
    @discardableResult
    mutating func connect(_ frame: StompFrame, until deadline: C.Instant) async throws(StompClientError) -> StompFrame {
        try await send(frame)
        let reply = try await next(until: deadline)
        guard reply.frame.command == .connected else {
            throw .unexpected("expected CONNECTED, got \(reply.frame.command.rawValue)")
        }
        session.connected(offered: frame.headers["heart-beat"].flatMap(StompHeartBeat.init) ?? .disabled, reply: reply.frame)
        return reply.frame
    }

    /// Subscribes to `destination`; with `receipt`, waits until the server confirms it has processed the
    /// subscription, so nothing sent to it afterwards can be lost.
    ///
    /// Frames other than the receipt that arrive meanwhile stay queued for ``next(until:)``.
    mutating func subscribe(destination: String, id: String, receipt: Bool, until deadline: C.Instant) async throws(StompClientError) {
        var frame = StompFrame.subscribe(destination: destination, id: id)
        guard receipt else { return try await send(frame) }
        let receiptID = session.nextReceiptID()
        frame.headers.append("receipt", receiptID)
        try await send(frame)
        try await awaitReceipt(receiptID, until: deadline)
    }

    /// Sends `frame`; a closed socket is reported as ``StompClientError/closed(_:)``.
    mutating func send(_ frame: StompFrame) async throws(StompClientError) {
        try await sendRaw(.text(String(decoding: StompFrameEncoder.encode(frame), as: UTF8.self)))
    }

    /// The next frame from the server (MESSAGE, RECEIPT, …), in arrival order.
    ///
    /// While it waits it sends a heart-beat whenever the client has been silent for the negotiated
    /// interval, and gives up on a server silent for twice its interval.
    ///
    /// - Throws: `.timeout` at `deadline`; `.serverError` for an ERROR frame; `.closed` once the socket closed;
    ///   `.malformed` for bytes that are not STOMP; `.heartBeatMissed`; `.cancelled`.
    mutating func next(until deadline: C.Instant) async throws(StompClientError) -> Received {
        while true {
            if let received = try session.nextFrame() { return received }
            try await receiveMessage(until: deadline)
        }
    }

    /// The session, handed to a follower that hands every frame to `handle`, in order, until it returns a result or
    /// `deadline` passes, with the heart-beats of ``next(until:)``; ``followed(_:failure:)`` takes it back.
    ///
    /// The caller runs the wait itself, once for the whole stream: `try await socket.consume(follower)` on its task, or
    /// with no task waiting (`socket.consumption(of: follower)`, which a GCCS iteration hands to the engine: this wait
    /// is where a GCCS user spends its minute).
    ///
    /// - Parameter handle: nil to go on, or the result; called where the socket reads while the caller waits.
    func follower(until deadline: C.Instant, _ handle: @escaping (Received) -> Outcome?) -> StompFollower<C> {
        StompFollower(session: session, clock: clock, deadline: deadline, handle: handle)
    }

    /// Takes the session back from `follower`, once the socket is done with it or when it never ran it.
    mutating func takeBack(_ follower: StompFollower<C>) {
        session = follower.session
    }

    /// Takes the session back from `follower` once the socket is done with it, and gives the result of its wait.
    ///
    /// - Parameter failure: what the socket's ``WebSocketConnection/consume(_:)`` threw, if it threw.
    mutating func followed(_ follower: StompFollower<C>, failure: (any Error)?) throws(StompClientError) -> Outcome {
        takeBack(follower)
        if let failure { throw StompClientError(failure) }
        return try follower.result.get()
    }

    /// Sends DISCONNECT with a receipt, waits for it (or `deadline`), then closes the socket with 1000.
    ///
    /// - Returns: frames that arrived after the last ``next(until:)`` and before the receipt (a late status
    ///   the caller may want to check), or the reason the goodbye was not clean.
    mutating func disconnect(until deadline: C.Instant) async -> (late: [StompFrame], error: StompClientError?) {
        let receiptID = session.nextReceiptID()
        var error: StompClientError?
        var late: [StompFrame] = []
        do {
            try await send(.disconnect(receipt: receiptID))
            late = try await awaitReceipt(receiptID, until: deadline)
        } catch let failure {
            error = failure
        }
        let remaining = clock.now.duration(to: deadline)
        await socket.close(code: 1000, reason: "", timeout: max(.milliseconds(1), min(remaining, .seconds(1))))
        return (late, error)
    }

    // MARK: Internals

    /// Waits for `RECEIPT receipt-id:<id>`; returns the other frames that came first, which stay queued too.
    @discardableResult
    private mutating func awaitReceipt(_ id: String, until deadline: C.Instant) async throws(StompClientError) -> [StompFrame] {
        while true {
            if let before = try session.takeReceipt(id) { return before }
            try await receiveMessage(until: deadline)
        }
    }

    private mutating func sendRaw(_ message: WebSocketMessage) async throws(StompClientError) {
        do {
            try await socket.send(message)
        } catch {
            throw StompClientError(error)
        }
        session.sent(at: clock.now)
    }

    /// Reads one WebSocket message into the session, sending or expecting heart-beats while it waits.
    private mutating func receiveMessage(until deadline: C.Instant) async throws(StompClientError) {
        while true {
            let timeout: Duration
            switch session.nextWait(until: deadline, now: clock.now) {
            case .sendHeartBeat:
                try await sendRaw(.text("\n"))
                continue
            case .fail(let error): throw error
            case .wait(let duration): timeout = duration
            }
            guard let received = try await receiveQueued(timeout: timeout) else { continue }
            try session.take(received, now: clock.now)
            return
        }
    }

    /// The next message, or nil when `timeout` passed without one (a heart-beat may be due).
    private func receiveQueued(timeout: Duration) async throws(StompClientError) -> ReceivedWebSocketMessage? {
        do {
            return try await socket.receiveQueued(timeout: timeout)
        } catch let error as TransportError where error.kind == .timeout {
            return nil
        } catch {
            throw StompClientError(error)
        }
    }
}

/// Why a STOMP session did not go as the flow needed.
enum StompClientError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Nothing the flow waited for came before its deadline.
    case timeout
    /// The server sent ERROR with this `message` header.
    case serverError(String)
    /// The WebSocket closed (code and reason from the server, or 1006 when it dropped).
    case closed(WebSocketClosed)
    /// The server's bytes are not STOMP.
    case malformed(StompError)
    /// The server sent something other than the protocol allows at this point.
    case unexpected(String)
    /// The server stayed silent for twice its negotiated heart-beat interval.
    case heartBeatMissed
    case transport(TransportError)
    case cancelled

    init(_ error: any Error) {
        switch error {
        case let closed as WebSocketClosed: self = .closed(closed)
        case let transport as TransportError: self = transport.kind == .cancelled ? .cancelled : .transport(transport)
        case is CancellationError: self = .cancelled
        default: self = .transport(TransportError(.other, "\(error)"))
        }
    }

    /// How a step that failed this way is counted.
    var outcome: Outcome {
        switch self {
        case .timeout: Outcome(.timeout, "no STOMP frame within the step timeout")
        case .serverError(let message): Outcome(.protocolError, "STOMP ERROR: \(message)")
        case .closed(let closed): Outcome(.transportError, "websocket closed \(closed.code)")
        case .malformed(let error): Outcome(.protocolError, "bad STOMP frame: \(error.kind)")
        case .unexpected(let what): Outcome(.protocolError, what)
        case .heartBeatMissed: Outcome(.transportError, "STOMP heart-beat missed")
        case .transport(let error): Outcome(error)
        case .cancelled: .cancelled
        }
    }

    var description: String { outcome.description }
}
