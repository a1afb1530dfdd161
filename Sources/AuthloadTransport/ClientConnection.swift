import AuthloadCore
import AuthloadWire
import CSystem
import Foundation

/// A request in flight on a connection: its bytes, its continuation, and the marks of its timing.
struct PendingRequest {
    let bytes: [UInt8]
    let method: String
    let deadline: Int64
    /// Unsafe rather than checked: the checked one allocates per request, and exactly-once is kept by
    /// construction here: whoever takes `pending` (``complete(_:keepAlive:)`` or ``close(failing:)``) resumes it.
    let continuation: UnsafeContinuation<HTTPResponse, any Error>
    let start: Int64
    var connected: Int64?
    var secured: Int64?
    var firstByte: Int64?
    var reusedConnection = false
}

/// One client connection on one event loop: connect, secure (TLS, when its stream does it), write a
/// request, parse the response.
///
/// Touched only on its loop's thread. It serves one request at a time and reports back to its
/// owner when it closes, so the owner opens a new one next time.
final class ClientConnection: EventHandler {
    /// The detail of a failure on a reused connection before any byte came back: safe to retry once.
    static let staleDetail = "stale keep-alive connection"

    enum State { case connecting, handshaking, open, closed }

    let loop: EventLoop
    let fd: Int32
    let stream: any ByteStream
    private(set) var state = State.connecting
    private var pending: PendingRequest?
    private var written = 0
    private var parser = HTTPResponseParser()
    /// When an idle connection closes; nil while a request is pending.
    private var idleDeadline: Int64?
    /// The one timer that watches the pending request's deadline and the idle deadline (see ``watch(until:)``).
    private var watchdog: (timer: TimerID, at: Int64)?
    private var interest = EPOLLOUT.rawValue
    private let idleTimeout: Int64
    private let onClose: (ClientConnection) -> Void

    /// - Parameters:
    ///   - source: where to connect from (`connections.sourceAddresses`, and a local port); the system's choice when nil.
    ///   - target: `host:port`, for messages.
    ///   - makeStream: wraps the connected socket: ``PlainStream`` for TCP, a TLS stream for HTTPS.
    init(
        loop: EventLoop, address: SocketAddress, source: SourceAddresses? = nil, target: String = "", idleTimeout: Duration,
        makeStream: (Int32) throws(TransportError) -> any ByteStream = { PlainStream(fd: $0) },
        onClose: @escaping (ClientConnection) -> Void
    ) throws(TransportError) {
        self.loop = loop
        self.idleTimeout = Monotonic.nanoseconds(idleTimeout)
        self.onClose = onClose
        fd = try Sockets.connect(to: address, from: source, target: target)
        do {
            stream = try makeStream(fd)
        } catch {
            Glibc.close(fd)
            throw error
        }
        loop.register(fd, events: EPOLLOUT.rawValue, handler: self)
        OpenSockets.http.add(1, ordering: .relaxed)
    }

    var isIdle: Bool { state == .open && pending == nil }

    /// Sends a request; the connection must be idle or still connecting.
    func send(_ request: PendingRequest) {
        precondition(pending == nil, "one request at a time per connection")
        idleDeadline = nil
        var request = request
        request.reusedConnection = state == .open
        if request.reusedConnection { request.connected = request.start }
        watch(until: request.deadline)
        pending = request
        written = 0
        parser.expectResponse(toMethod: request.method)
        if state == .open { flush() }
    }

    func handleEvents(_ events: UInt32) {
        switch state {
        case .connecting:
            finishConnect()
            return
        case .handshaking:
            continueHandshake()
            return
        case .open, .closed: break
        }
        if events & EPOLLOUT.rawValue != 0 { flush() }
        if events & (EPOLLIN.rawValue | EPOLLHUP.rawValue | EPOLLERR.rawValue) != 0 { readAvailable() }
    }

    /// Closes the socket; a request still pending fails with `error`.
    ///
    /// - Parameter reset: close with a reset, leaving no TIME_WAIT (``Sockets/resetOnClose(_:)``); only for an
    ///   idle connection, which has nothing in flight.
    func close(failing error: TransportError = TransportError(.closed), reset: Bool = false) {
        guard state != .closed else { return }
        if reset, isIdle { Sockets.resetOnClose(fd) }
        state = .closed
        OpenSockets.http.subtract(1, ordering: .relaxed)
        if let watchdog { loop.cancel(watchdog.timer) }
        watchdog = nil
        stream.shutdown()
        loop.close(fd)
        onClose(self)
        if let request = pending {
            pending = nil
            request.continuation.resume(throwing: error)
        }
    }

    /// Makes sure the watchdog fires no later than `deadline`.
    ///
    /// Scheduling a timer per request and another per idle spell, and cancelling both, cost about 5 % of
    /// the generator's CPU. One timer per connection does the same: it is moved only when a deadline comes
    /// earlier than it, and when it fires early it re-arms for whatever deadline is current. Under load it
    /// fires about once per request timeout, whatever the request rate.
    private func watch(until deadline: Int64) {
        if let watchdog {
            guard deadline < watchdog.at else { return }
            loop.cancel(watchdog.timer)
        }
        // Strong on purpose: a weak reference gives the connection a side table, and then every retain and
        // release of it takes the slow path. The timer holds it until it fires or `close()` cancels it.
        watchdog = (loop.schedule(at: deadline) { self.watchdogFired() }, deadline)
    }

    /// Fails the pending request whose deadline has come, or closes a connection idle for its whole timeout;
    /// otherwise re-arms for the deadline now current.
    private func watchdogFired() {
        watchdog = nil
        let now = Monotonic.now
        if let request = pending {
            if now >= request.deadline {
                // A response that had begun (it trickles) is told apart from one that never came.
                fail(
                    state != .open
                        ? TransportError(.connectTimeout)
                        : TransportError(.timeout, request.firstByte == nil ? "" : TransportError.incompleteDetail))
            } else {
                watch(until: request.deadline)
            }
        } else if let idleDeadline {
            if now >= idleDeadline { close(reset: true) } else { watch(until: idleDeadline) }
        }
    }

    private func fail(_ error: TransportError) { close(failing: error) }

    private func finishConnect() {
        var code: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        getsockopt(fd, SOL_SOCKET, SO_ERROR, &code, &length)
        guard code == 0 else {
            fail(SocketError.transportError(code, during: "connect"))
            return
        }
        state = .handshaking
        pending?.connected = Monotonic.now
        continueHandshake()
    }

    private func continueHandshake() {
        switch stream.handshake() {
        case .done:
            state = .open
            // Plain TCP has no handshake: its time is zero, not the few nanoseconds of this call.
            let connected = pending?.connected
            pending?.secured = stream.isSecure ? Monotonic.now : connected
            setInterest(EPOLLIN.rawValue)
            if pending != nil { flush() } else { armIdleTimer() }
        case .wouldBlock(let interest):
            setInterest(interest)
        case .end:
            fail(.closedDuringHandshake)
        case .failed(let error):
            fail(error.duringHandshake())
        }
    }

    private func flush() {
        guard let request = pending, written < request.bytes.count else { return }
        switch stream.write(request.bytes, from: &written) {
        case .done: setInterest(EPOLLIN.rawValue)
        case .wouldBlock(let interest): setInterest(EPOLLIN.rawValue | interest)
        case .end: failOrRetry(TransportError(.closed, "the server closed the connection"))
        case .failed(let error): failOrRetry(error)
        }
    }

    /// Changes what epoll reports only when it changes: most requests fit one `send`.
    private func setInterest(_ events: UInt32) {
        guard events != interest else { return }
        interest = events
        loop.modify(fd, events: events)
    }

    private func readAvailable() {
        guard state == .open else { return }
        let stop = stream.read(into: loop.readBuffer) { chunk in
            if pending != nil, pending?.firstByte == nil { pending?.firstByte = Monotonic.now }
            guard pending != nil else {
                fail(.badResponse(.unsolicitedBytes))
                return false
            }
            parser.feed(chunk)
            return deliverParsed() && state == .open
        }
        switch stop {
        case .stopped, .drained: break
        case .wants(let interest): setInterest(EPOLLIN.rawValue | interest)
        case .end: endOfStream()
        case .failed(let error): failOrRetry(error)
        }
    }

    /// Hands a complete response to its waiter; false when the connection closed on the way.
    private func deliverParsed() -> Bool {
        do {
            guard case .response(let response, let keepAlive) = try parser.next() else { return true }
            // One request at a time: bytes after a complete response are more body than Content-Length said.
            guard !parser.hasReceivedBytes else {
                fail(.badResponse(.bodyLongerThanContentLength))
                return false
            }
            complete(response, keepAlive: keepAlive)
            return state == .open
        } catch {
            fail(.badResponse(Self.problem(error)))
            return false
        }
    }

    private func endOfStream() {
        guard pending != nil else {
            close()
            return
        }
        parser.endOfStream()
        do {
            if case .response(let response, _) = try parser.next() {
                complete(response, keepAlive: false)
                return
            }
        } catch {
            fail(.badResponse(Self.problem(error)))
            return
        }
        failOrRetry(TransportError(.closed, "the server closed the connection before responding"))
    }

    /// The stable name of what a parse error says about the response.
    static func problem(_ error: HTTPParseError) -> TransportError.ResponseProblem {
        switch error.kind {
        case .malformedStartLine, .unsupportedVersion: .malformedStatusLine
        case .malformedHeader, .obsoleteLineFolding, .invalidHost: .malformedHeader
        case .headerTooLarge: .headersTooLarge
        // The decoder says what it still expected; only a Content-Length body expects "more body bytes".
        case .truncated: error.description.contains("more body bytes") ? .bodyShorterThanContentLength : .cutShort
        case .invalidContentLength, .conflictingContentLength, .unsupportedTransferEncoding, .invalidTransferEncoding,
            .invalidChunkSize, .malformedChunk, .bodyTooLarge:
            .malformedBody
        }
    }

    /// A kept-alive connection the server had already closed fails before any byte arrives; that
    /// request never reached the server's logic, so it is reported as `.closed` for the owner to retry.
    private func failOrRetry(_ error: TransportError) {
        if let request = pending, request.reusedConnection, request.firstByte == nil {
            fail(TransportError(.closed, ClientConnection.staleDetail))
        } else {
            fail(error)
        }
    }

    private func complete(_ response: HTTPResponse, keepAlive: Bool) {
        guard let request = pending else { return }
        pending = nil
        let now = Monotonic.now
        var response = response
        let connected = request.connected ?? request.start
        let secured = request.secured ?? connected
        response.timing = RequestTiming(
            connect: .nanoseconds(connected - request.start),
            tlsHandshake: .nanoseconds(secured - connected),
            timeToFirstByte: .nanoseconds((request.firstByte ?? now) - request.start),
            total: .nanoseconds(now - request.start),
            reusedConnection: request.reusedConnection)
        if keepAlive { armIdleTimer(now: now) } else { close() }
        request.continuation.resume(returning: response)
    }

    private func armIdleTimer(now: Int64 = Monotonic.now) {
        idleDeadline = now + idleTimeout
        watch(until: now + idleTimeout)
    }
}
