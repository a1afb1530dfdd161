import AuthloadCore
import AuthloadWire

/// The client side of a STOMP 1.2 session as a state machine without I/O: WebSocket messages and instants in, frames
/// and what to do next out (docs/protocols.md, STOMP).
///
/// It decodes what the server sends (several frames in one message, one frame over several), dates each frame with
/// when its message arrived, keeps them in order until asked, and says when to send a heart-beat, when the server has
/// been silent too long and when a deadline passed. ``StompClient`` runs it on a task; ``StompFollower`` runs it where
/// the socket reads, message by message.
///
/// ```swift
/// var session = StompSession(now: clock.now)
/// try session.take(received, now: clock.now)       // a WebSocket message
/// while let frame = try session.nextFrame() { … }   // MESSAGE, RECEIPT, … in order; ERROR throws
/// switch session.nextWait(until: deadline, now: clock.now) { … }
/// ```
struct StompSession<Instant: InstantProtocol>: Sendable where Instant.Duration == Duration {
    /// A frame and the instant its WebSocket message arrived.
    struct Received: Sendable {
        var frame: StompFrame
        var arrived: Instant
    }

    /// What to do before the next frame can come.
    enum Wait: Equatable {
        /// The client has been silent for its negotiated interval: send a heart-beat (then ``sent(at:)``).
        case sendHeartBeat
        /// The session cannot go on: the deadline passed or the server's heart-beats stopped.
        case fail(StompClientError)
        /// Wait at most this long for a message (the deadline, the next heart-beat or the server's silence limit).
        case wait(Duration)
    }

    /// What both sides agreed in CONNECT/CONNECTED; nothing is sent or expected until then.
    var heartBeat: StompHeartBeat.Negotiated { liveness.heartBeat }
    /// The heart-beats and when the client last sent and last heard: all ``nextWait(until:now:)`` reads.
    private(set) var liveness: Liveness
    private var decoder = StompFrameDecoder()
    /// The frames not handed out yet, oldest first: the oldest held apart from the rest. A session mostly hears one
    /// frame at a time and hands it out at once, and an array for it (let go once empty, so that a session waiting
    /// seconds for its next status keeps no storage) cost every status an allocation.
    private var oldest: Received?
    private var later: [Received] = []
    private var receipts = 0

    init(now: Instant) {
        liveness = Liveness(lastSent: now, lastHeard: now)
    }

    /// Starts the heart-beats that `offered` (the CONNECT's header) and the server's CONNECTED agree on.
    mutating func connected(offered: StompHeartBeat, reply: StompFrame) {
        let answered = reply.headers["heart-beat"].flatMap(StompHeartBeat.init) ?? .disabled
        liveness.heartBeat = StompHeartBeat.negotiate(client: offered, server: answered)
    }

    /// A new receipt id, `r-1`, `r-2`, …
    mutating func nextReceiptID() -> String {
        receipts += 1
        return "r-\(receipts)"
    }

    /// The client sent something at `now` (a frame or a heart-beat).
    mutating func sent(at now: Instant) { liveness.lastSent = now }

    /// Feeds a WebSocket message read at `now` to the decoder and queues the frames it completes, each dated when the
    /// message arrived (`received.queued` before `now`).
    ///
    /// - Throws: `.malformed` for bytes that are not STOMP.
    mutating func take(_ received: ReceivedWebSocketMessage, now: Instant) throws(StompClientError) {
        let arrived = now.advanced(by: .zero - received.queued)
        liveness.lastHeard = now
        switch received.message {
        case .text(let text): decoder.feed(text.utf8)
        case .binary(let bytes): decoder.feed(bytes)
        }
        while true {
            let event: StompFrameDecoder.Event
            do {
                event = try decoder.next()
            } catch {
                throw .malformed(error)
            }
            switch event {
            case .frame(let frame):
                let received = Received(frame: frame, arrived: arrived)
                if oldest == nil { oldest = received } else { later.append(received) }
            case .heartBeat: continue
            case .needMoreData: return
            }
        }
    }

    /// The oldest frame not handed out yet, or nil when none is queued.
    ///
    /// - Throws: `.serverError` when it is an ERROR frame (the server closes after it).
    mutating func nextFrame() throws(StompClientError) -> Received? {
        guard let received = oldest else { return nil }
        dropOldest()
        if received.frame.command == .error {
            throw .serverError(received.frame.headers["message"] ?? String(decoding: received.frame.body.prefix(200), as: UTF8.self))
        }
        return received
    }

    /// Takes `RECEIPT receipt-id:<id>` out of the queue if it came, with the frames before it (which stay queued too).
    ///
    /// - Throws: `.serverError` for an ERROR frame met first.
    mutating func takeReceipt(_ id: String) throws(StompClientError) -> [StompFrame]? {
        guard let first = oldest else { return nil }
        if try Self.isReceipt(first.frame, id) {
            dropOldest()
            return []
        }
        // Found before it is removed: removed while the loop held the array, it was copied first.
        var found: Int?
        for index in later.indices {
            if try Self.isReceipt(later[index].frame, id) {
                found = index
                break
            }
        }
        guard let index = found else { return nil }
        var before: [StompFrame] = []
        before.reserveCapacity(index + 1)
        before.append(first.frame)
        for received in later[..<index] { before.append(received.frame) }
        later.remove(at: index)
        if later.isEmpty { later = [] }
        return before
    }

    /// Hands the oldest frame's place to the next one, if any.
    private mutating func dropOldest() {
        oldest = later.isEmpty ? nil : later.removeFirst()
        // The session waits seconds for its next status: an empty queue keeps no storage meanwhile.
        if later.isEmpty { later = [] }
    }

    /// Whether `frame` is `RECEIPT receipt-id:<id>`.
    ///
    /// - Throws: `.serverError` for an ERROR frame.
    private static func isReceipt(_ frame: StompFrame, _ id: String) throws(StompClientError) -> Bool {
        if frame.command == .error { throw .serverError(frame.headers["message"] ?? "") }
        return frame.command == .receipt && frame.headers["receipt-id"] == id
    }

    /// What to do at `now` until a frame comes, the wait bounded by `deadline`.
    func nextWait(until deadline: Instant, now: Instant) -> Wait { liveness.nextWait(until: deadline, now: now) }

    /// A session's heart-beat timing, apart from its decoder and queue: a caller that holds the session in a class
    /// (``StompFollower``) asks ``nextWait(until:now:)`` of these few words, where asking the session copied all of it,
    /// retaining the decoder's buffer and the queued frames, at every status.
    struct Liveness: Sendable {
        var heartBeat = StompHeartBeat.Negotiated(clientToServerMilliseconds: 0, serverToClientMilliseconds: 0)
        var lastSent: Instant
        var lastHeard: Instant

        /// What to do at `now` until a frame comes, the wait bounded by `deadline`.
        func nextWait(until deadline: Instant, now: Instant) -> Wait {
            var wake = deadline
            if let interval = heartBeat.clientToServer {
                let due = lastSent.advanced(by: interval)
                if due <= now { return .sendHeartBeat }
                wake = min(wake, due)
            }
            if let interval = heartBeat.serverToClient {
                let limit = lastHeard.advanced(by: interval * 2)
                if limit <= now { return .fail(.heartBeatMissed) }
                wake = min(wake, limit)
            }
            if deadline <= now { return .fail(.timeout) }
            return .wait(now.duration(to: wake))
        }
    }
}
