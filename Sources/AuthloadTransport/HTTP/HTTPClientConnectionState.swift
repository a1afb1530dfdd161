import AuthloadCore
import AuthloadWire

/// The decisions of one HTTP/1.1 client connection, with no socket and no clock.
///
/// ``HTTPClientConnection`` owns the socket, the stream and the timer, and tells this state what happened
/// and when: it connected, its handshake finished, bytes arrived, the stream ended or failed, the timer
/// fired. The state answers with an ``Action``: write the request, hand a response over, fail the
/// request, close, or hand the socket over once an upgrade is answered. Every timeout decision lives
/// here (connect, request, idle), and so do the marks that time a request, so its tests step through
/// time by passing instants, with no socket.
///
/// `Request` is whatever the connection needs to answer a caller (its bytes and continuation); the
/// state holds it while it is in flight and gives it back exactly once: in a `.respond`, `.fail` or
/// `.upgrade`, or from ``close()``.
struct HTTPClientConnectionState<Request> {
    enum Phase {
        case connecting, handshaking, open
        /// A WebSocket upgrade was answered: the socket now carries another protocol, and this state is done.
        case upgraded
        case closed
    }

    /// The request in flight, its deadlines, and the marks of its timing.
    struct Exchange {
        var request: Request
        let start: MonotonicInstant
        let deadline: MonotonicInstant
        /// Connecting, and the TLS handshake with it, must be done by then; no later than `deadline`.
        let connectDeadline: MonotonicInstant
        var connected: MonotonicInstant?
        var secured: MonotonicInstant?
        var firstByte: MonotonicInstant?
        /// Sent on a connection kept alive from an earlier request.
        var reusedConnection: Bool
        /// Asks to switch protocols (a WebSocket opening): the answer ends HTTP on this connection.
        let upgrade: Bool
    }

    /// What the connection does next.
    enum Action {
        /// Nothing until the next event.
        case wait
        /// Write the request in flight: the connection is open.
        case write
        /// The response is complete: hand it to its request; close the connection first when `close`.
        case respond(Request, HTTPResponse, close: Bool)
        /// Close the connection and fail the request with the error.
        case fail(Request, TransportError)
        /// Close a connection with no request in flight; `reset` leaves no TIME_WAIT (it was idle).
        case close(reset: Bool)
        /// The answer to an upgrade request: the owner checks it, and either takes the socket over (with
        /// `leftover`, the bytes that came behind the response) or closes it.
        case upgrade(Request, HTTPResponse, leftover: [UInt8])
    }

    /// The error of a failure on a reused connection before any byte came back: safe to retry once (its reason,
    /// ``TransportError/Reason/staleConnection``, says so).
    static var stale: TransportError { TransportError(.staleConnection, "stale keep-alive connection") }

    private(set) var phase = Phase.connecting
    private(set) var exchange: Exchange?
    /// When the connection's one timer should fire; nil when nothing is being watched.
    ///
    /// The connection moves its timer whenever this changes. It only ever moves earlier while a timer is
    /// set (``watch(until:)``), and a timer that fires early re-arms for the deadline then current:
    /// scheduling and cancelling a timer per request and per idle spell showed in the generator's CPU profile,
    /// while one timer per connection fires about once per request timeout, whatever the request rate.
    private(set) var timerDue: MonotonicInstant?
    private var idleDeadline: MonotonicInstant?
    private var parser = HTTPResponseParser()
    private let idleTimeout: Duration

    init(idleTimeout: Duration) { self.idleTimeout = idleTimeout }

    var isIdle: Bool { phase == .open && exchange == nil }

    // MARK: Events

    /// A request to send; the connection must be idle or still connecting.
    ///
    /// - Parameter upgrade: the request asks to switch protocols; its answer comes as `.upgrade`.
    mutating func send(
        _ request: Request, method: String, start: MonotonicInstant, deadline: MonotonicInstant,
        connectDeadline: MonotonicInstant, upgrade: Bool = false
    ) -> Action {
        precondition(exchange == nil && (phase == .connecting || phase == .open), "one request at a time per open connection")
        let reused = phase == .open
        let connectDeadline = min(connectDeadline, deadline)
        exchange = Exchange(
            request: request, start: start, deadline: deadline, connectDeadline: connectDeadline,
            connected: reused ? start : nil, reusedConnection: reused, upgrade: upgrade)
        idleDeadline = nil
        parser.expectResponse(toMethod: method)
        watch(until: reused ? deadline : connectDeadline)
        return reused ? .write : .wait
    }

    /// The TCP connection is up; the stream's handshake (if any) comes next.
    mutating func connected(at now: MonotonicInstant) {
        guard phase == .connecting else { return }
        phase = .handshaking
        exchange?.connected = now
    }

    /// The stream's handshake finished: the connection is open.
    ///
    /// - Parameter secure: the handshake was TLS, worth timing; plain TCP has none, so its time is zero.
    mutating func secured(at now: MonotonicInstant, secure: Bool) -> Action {
        guard phase == .handshaking else { return .wait }
        phase = .open
        guard exchange != nil else {
            becomeIdle(at: now)
            return .wait
        }
        let connected = exchange?.connected
        exchange?.secured = secure ? now : connected
        // The connect deadline no longer applies; the request deadline is later, so the timer re-arms when it fires.
        return .write
    }

    /// Response bytes arrived.
    mutating func received(_ bytes: UnsafeRawBufferPointer, at now: MonotonicInstant) -> Action {
        guard phase == .open else { return .wait }
        guard exchange != nil else {
            // Bytes nobody asked for: the connection cannot be trusted with the next request.
            phase = .closed
            return .close(reset: false)
        }
        if exchange?.firstByte == nil { exchange?.firstByte = now }
        parser.feed(bytes)
        do {
            guard case .response(let response, let keepAlive) = try parser.next() else { return .wait }
            if exchange?.upgrade == true { return upgraded(response, at: now) }
            // One request at a time: bytes after a complete response are more body than Content-Length said.
            guard !parser.hasReceivedBytes else { return fail(.badResponse(.bodyLongerThanContentLength)) }
            return respond(response, keepAlive: keepAlive, at: now)
        } catch {
            return fail(.badResponse(Self.problem(error)))
        }
    }

    /// The peer ended the stream (a read returned 0, or TLS `close_notify`).
    mutating func streamEnded(at now: MonotonicInstant) -> Action {
        guard phase == .open else { return .wait }
        guard exchange != nil else {
            phase = .closed
            return .close(reset: false)
        }
        parser.endOfStream()
        do {
            // A response without Content-Length ends with the stream.
            if case .response(let response, _) = try parser.next() {
                return exchange?.upgrade == true ? upgraded(response, at: now) : respond(response, keepAlive: false, at: now)
            }
        } catch {
            return fail(.badResponse(Self.problem(error)))
        }
        return failOrRetry(TransportError(.closed, "the server closed the connection before responding"))
    }

    /// Connecting, the handshake, a read or a write failed.
    mutating func streamFailed(_ error: TransportError) -> Action {
        guard phase != .closed, phase != .upgraded else { return .wait }
        guard exchange != nil else {
            phase = .closed
            return .close(reset: false)
        }
        return failOrRetry(error)
    }

    /// The connection's timer fired: a deadline may have come, or the timer re-arms for the one now current.
    mutating func timerFired(at now: MonotonicInstant) -> Action {
        timerDue = nil
        guard phase != .closed, phase != .upgraded else { return .wait }
        if let exchange {
            if phase != .open, now >= exchange.connectDeadline {
                // The TLS handshake is part of connecting: a server that accepts but never answers it times out here too.
                return fail(
                    phase == .handshaking
                        ? TransportError(.timedOut(.tlsHandshake), "TLS handshake")
                        : TransportError(.timedOut(.connecting), TransportError.unansweredConnectDetail))
            }
            if now >= exchange.deadline {
                // A response that had begun (it trickles) is told apart from one that never came.
                return fail(
                    exchange.firstByte == nil
                        ? TransportError(.timedOut(.awaitingResponse))
                        : TransportError(.timedOut(.readingResponse), TransportError.incompleteDetail))
            }
            watch(until: phase == .open ? exchange.deadline : exchange.connectDeadline)
        } else if let idleDeadline {
            if now >= idleDeadline {
                phase = .closed
                return .close(reset: true)
            }
            watch(until: idleDeadline)
        }
        return .wait
    }

    /// The owner closes the connection (cancelled, shut down, replaced); hands back the request in flight to fail.
    mutating func close() -> Request? {
        phase = .closed
        timerDue = nil
        defer { exchange = nil }
        return exchange?.request
    }

    // MARK: Decisions

    /// Makes sure the timer fires no later than `deadline`.
    private mutating func watch(until deadline: MonotonicInstant) {
        if let timerDue, timerDue <= deadline { return }
        timerDue = deadline
    }

    private mutating func becomeIdle(at now: MonotonicInstant) {
        let deadline = now + idleTimeout
        idleDeadline = deadline
        watch(until: deadline)
    }

    /// Takes the exchange off, with its response timed from the exchange's marks.
    private mutating func finish(_ response: consuming HTTPResponse, at now: MonotonicInstant) -> (Request, HTTPResponse)? {
        // Moved out, not copied: the request's bytes and the response's buffers each cost a retain per copy.
        guard let exchange = exchange.take() else { return nil }
        let connected = exchange.connected ?? exchange.start
        let secured = exchange.secured ?? connected
        // The loop stamps a round's events with the instant it woke, which comes after the request was written; the
        // clamp keeps any stamp taken otherwise from making a negative time.
        let end = max(now, exchange.start)
        response.timing = RequestTiming(
            connect: connected - exchange.start,
            tlsHandshake: secured - connected,
            timeToFirstByte: min(max(exchange.firstByte ?? end, exchange.start), end) - exchange.start,
            total: end - exchange.start,
            reusedConnection: exchange.reusedConnection)
        return (exchange.request, response)
    }

    private mutating func upgraded(_ response: consuming HTTPResponse, at now: MonotonicInstant) -> Action {
        guard let (request, response) = finish(response, at: now) else { return .wait }
        phase = .upgraded
        timerDue = nil
        let leftover = parser.takeUnparsedBytes()
        // The socket carries frames from now on: the parser's buffers would otherwise stay for the WebSocket's life.
        parser = HTTPResponseParser()
        return .upgrade(request, response, leftover: leftover)
    }

    private mutating func respond(_ response: consuming HTTPResponse, keepAlive: Bool, at now: MonotonicInstant) -> Action {
        guard let (request, response) = finish(response, at: now) else { return .wait }
        if keepAlive {
            becomeIdle(at: now)
        } else {
            phase = .closed
            timerDue = nil
        }
        return .respond(request, response, close: !keepAlive)
    }

    private mutating func fail(_ error: TransportError) -> Action {
        phase = .closed
        timerDue = nil
        guard let exchange else { return .close(reset: false) }
        self.exchange = nil
        return .fail(exchange.request, error)
    }

    /// A kept-alive connection the server had already closed fails before any byte arrives; that
    /// request never reached the server's logic, so it is reported as `.closed` for the owner to retry.
    private mutating func failOrRetry(_ error: TransportError) -> Action {
        if let exchange, exchange.reusedConnection, exchange.firstByte == nil {
            return fail(Self.stale)
        }
        return fail(error)
    }

    /// The stable name of what a parse error says about the response: the parser's own reason, with the limit a
    /// body passed, so a server that streams without end is told apart from one whose chunks are broken.
    static func problem(_ error: HTTPParseError) -> TransportError.ResponseProblem {
        switch error.kind {
        case .malformedStartLine, .unsupportedVersion: .malformedStatusLine
        case .malformedHeader, .obsoleteLineFolding, .invalidHost: .malformedHeader
        case .headerTooLarge: .headersTooLarge
        case .truncated: error.endedInsideContentLength ? .bodyShorterThanContentLength : .cutShort
        case .invalidContentLength, .conflictingContentLength, .unsupportedTransferEncoding, .invalidTransferEncoding:
            .malformedFraming
        case .invalidChunkSize: .invalidChunkSize
        case .malformedChunk: .malformedChunk
        case .bodyTooLarge: error.limit.map { .bodyTooLarge(limit: $0) } ?? .malformedFraming
        }
    }
}
