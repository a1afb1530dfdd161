import AuthloadCore
import AuthloadWire
import CSystem

/// One HTTP/2 client connection on one event loop: connect, secure (TLS, with ALPN), then carry many requests at
/// once as streams of an ``HTTP2Connection``, whose actions it performs.
///
/// Requests wait in line while the connection connects, and while the server's SETTINGS_MAX_CONCURRENT_STREAMS is
/// reached; that wait, and a body's wait for flow-control window, are timed apart (``RequestTiming/streamWait``) and
/// are part of the latency. What the frames mean (stream states, windows, GOAWAY, errors) is the machine's; this
/// class holds the socket, the one timer (the earliest deadline of a request, of the connect, or of idleness), and
/// the exchanges by stream. Writes that one event calls for go out together.
///
/// A stream the server refused or did not take before its GOAWAY fails with an error the client sends again
/// (``TransportError/isUnprocessedByServer``); with no h2 by ALPN the requests come back as
/// ``HTTP2Detour/serverSpeaksOnlyHTTP1`` when the client may fall back, or fail. Touched only on its loop's thread.
final class HTTP2ClientConnection: EventHandler {
    enum Phase { case connecting, handshaking, open, closed }

    /// What the connection tells its owner.
    struct Events {
        /// Closed: the owner opens another for its next request.
        var closed: (HTTP2ClientConnection) -> Void = { _ in }
        /// The server sent GOAWAY: no new request should come here.
        var goingAway: (HTTP2ClientConnection) -> Void = { _ in }
        /// The server's SETTINGS_MAX_CONCURRENT_STREAMS changed to this.
        var capacityChanged: (Int) -> Void = { _ in }
    }

    let loop: any ConnectionLoop
    let core: ConnectionCore
    private(set) var phase = Phase.connecting
    private var machine = HTTP2Connection()
    private let fallsBackToHTTP1: Bool
    private let idleTimeout: Duration
    /// Whom it tells; set once the owner is ready to hear.
    var events: Events
    /// Exchanges sent, by stream.
    private var active: [UInt32: HTTP2Exchange] = [:]
    /// Exchanges waiting for the connection to open or for a stream slot, oldest first.
    private var waiting = FIFOQueue<HTTP2Exchange>(keptCapacity: .max)
    /// Exchanges whose body waits for window.
    private var holding: [HTTP2Exchange] = []
    /// Bytes the machine asked to write during this event, written once at its end.
    private var outbox: [UInt8] = []
    private var timer: (id: TimerID, at: MonotonicInstant)?
    private var idleSince: MonotonicInstant?
    /// The server's GOAWAY code, once it sent one.
    private var goAwayCode: HTTP2ErrorCode?
    private var connectDeadline: MonotonicInstant?
    private var connectedAt: MonotonicInstant?
    private var securedAt: MonotonicInstant?
    private var reportedCapacity = Int.max

    /// - Parameters:
    ///   - fallsBackToHTTP1: a server that chooses no h2 by ALPN sends the requests back for HTTP/1.1, rather than
    ///     failing them (`target.http` "auto").
    init(
        loop: any ConnectionLoop, stream: any ByteStream, idleTimeout: Duration, fallsBackToHTTP1: Bool, events: Events = Events()
    ) {
        self.loop = loop
        self.idleTimeout = idleTimeout
        self.fallsBackToHTTP1 = fallsBackToHTTP1
        self.events = events
        core = ConnectionCore(loop: loop, stream: stream, interest: EPOLLOUT.rawValue)
        OpenSockets.http.add(1, ordering: .relaxed)
    }

    /// A connection to `address` on `loop`, connecting.
    convenience init(
        loop: EventLoop, address: SocketAddress, route: EndpointRoute, events: Events
    ) throws(TransportError) {
        let fd = try Sockets.connect(to: address, from: route.sources, target: route.target)
        let stream: any ByteStream
        do {
            stream = try route.makeHTTP2Stream(fd)
        } catch {
            SystemCalls.close(fd)
            throw error
        }
        self.init(
            loop: loop, stream: stream, idleTimeout: route.configuration.idleTimeout, fallsBackToHTTP1: route.fallsBackToHTTP1,
            events: events)
    }

    /// Whether a new request may come here: not closed, and the server has not said GOAWAY.
    var takesRequests: Bool { phase != .closed && goAwayCode == nil }

    /// Requests sent or waiting.
    var load: Int { active.count + waiting.count }

    /// The server's SETTINGS_MAX_CONCURRENT_STREAMS, once it said one.
    var maxConcurrentStreams: Int { machine.peerMaxConcurrentStreams }

    /// Takes a request: sent at once when a stream is free, otherwise when one is.
    ///
    /// - Parameter settling: false for one of a batch, whose sender calls ``settle()`` after the last, so the
    ///   batch's frames go out in one write.
    func send(_ exchange: HTTP2Exchange, settling: Bool = true) {
        guard takesRequests else {
            exchange.finish(.failure(TransportError.http2Unsent))
            return
        }
        idleSince = nil
        exchange.connection = self
        if phase != .open {
            exchange.reusedConnection = false
            connectDeadline = min(connectDeadline ?? exchange.connectDeadline, exchange.connectDeadline)
            watch(until: exchange.connectDeadline)
        }
        watch(until: exchange.deadline)
        exchange.waitingSince = loop.now
        waiting.append(exchange)
        guard settling else { return }
        if phase == .open { openStreams() }
        settle()
    }

    /// Starts watching the socket: for its connect to finish, then for the server's frames.
    ///
    /// - Throws: when the loop will not watch it; the connection is closed then.
    func register() throws(TransportError) {
        do {
            try core.register(handler: self)
        } catch {
            fail(error)
            throw error
        }
    }

    /// Gives up on a request whose caller was cancelled: its stream is reset, the others go on.
    func cancel(_ exchange: HTTP2Exchange) {
        guard !exchange.isFinished else { return }
        if let id = exchange.streamID {
            active[id] = nil
            perform(machine.resetStream(id, code: .cancel))
        }
        exchange.finish(.failure(CancellationError()))
        settle()
    }

    /// Closes the socket (GOAWAY first when open); requests in flight fail with `error`.
    func close(failing error: TransportError = TransportError(.closed), reset: Bool = false) {
        guard phase != .closed else { return }
        if phase == .open { perform(machine.close()) }
        flushOutbox()
        let idle = active.isEmpty && waiting.isEmpty
        closeSocket(reset: reset && idle, failing: error)
    }

    func handleEvents(_ events: UInt32) {
        switch phase {
        case .connecting: finishConnect(events)
        case .handshaking: continueHandshake()
        case .open:
            if events & EPOLLOUT.rawValue != 0, case .failed(let error) = core.flush() { return fail(error) }
            if events & (EPOLLIN.rawValue | EPOLLHUP.rawValue | EPOLLERR.rawValue) != 0 { readAvailable() }
        case .closed: return
        }
        settle()
    }

    // MARK: Connecting

    private func finishConnect(_ events: UInt32) {
        if let failure = core.connectFailure(events: events) { return fail(TransportError.socket(failure, .connecting)) }
        connectedAt = loop.now
        phase = .handshaking
        continueHandshake()
    }

    private func continueHandshake() {
        switch core.handshake() {
        case .pending: return
        case .failed(let error): return fail(error)
        case .done: break
        }
        let now = loop.now
        securedAt = core.stream.isSecure ? now : connectedAt
        if core.stream.isSecure, core.stream.negotiatedProtocol != "h2" {
            let chosen = core.stream.negotiatedProtocol.map { "chose \($0)" } ?? "chose no protocol"
            return fallsBackToHTTP1
                ? closeSocket(reset: false, failingWith: HTTP2Detour.serverSpeaksOnlyHTTP1)
                : fail(TransportError(.http2NotNegotiated, "HTTP/2 required, and the server \(chosen) by ALPN"))
        }
        phase = .open
        connectDeadline = nil
        // Their wait for a stream starts now: the wait so far was for the connection, timed as connecting.
        for exchange in waiting {
            exchange.connected = connectedAt
            exchange.secured = securedAt
            exchange.waitingSince = now
        }
        perform(machine.start())
        openStreams()
    }

    // MARK: Streams

    /// Sends waiting requests while the server allows more streams.
    private func openStreams() {
        guard phase == .open else { return }
        let now = loop.now
        while machine.canOpenStream, let exchange = waiting.popFirst() {
            if exchange.isFinished { continue }
            let opened: (streamID: UInt32, actions: [HTTP2Connection.Action])
            do {
                opened = try machine.sendHeaders(exchange.fields, endStream: exchange.body.isEmpty)
            } catch {
                exchange.finish(.failure(TransportError.http2Unsent))
                continue
            }
            exchange.endWaits(at: now)
            exchange.streamID = opened.streamID
            active[opened.streamID] = exchange
            perform(opened.actions)
            if !exchange.body.isEmpty {
                do {
                    perform(try machine.sendData(streamID: opened.streamID, exchange.body, endStream: true))
                } catch {
                    preconditionFailure("a stream just opened takes its body: \(error)")
                }
                if machine.isHoldingData(of: opened.streamID) {
                    exchange.windowWaitSince = now
                    holding.append(exchange)
                }
            }
        }
    }

    /// Stops the window wait of bodies now sent.
    private func checkHolding() {
        guard !holding.isEmpty else { return }
        let now = loop.now
        holding.removeAll { exchange in
            guard let id = exchange.streamID, !exchange.isFinished, machine.isHoldingData(of: id) else {
                exchange.endWaits(at: now)
                return true
            }
            return false
        }
    }

    private func readAvailable() {
        let end = core.read { chunk in
            perform(machine.received(chunk))
            return phase == .open
        }
        if machine.peerMaxConcurrentStreams != reportedCapacity {
            reportedCapacity = machine.peerMaxConcurrentStreams
            events.capacityChanged(reportedCapacity)
        }
        switch end {
        case .paused: break
        case .end: ended(TransportError(.closed, "the server closed the connection"))
        case .failed(let error): ended(error)
        }
    }

    /// The socket ended or broke while open: requests in flight fail; those not yet sent go again elsewhere.
    private func ended(_ error: TransportError) {
        guard phase != .closed else { return }
        closeSocket(reset: false, failing: goAwayCode.map { TransportError.http2GoAway($0, sentByServer: true) } ?? error)
    }

    /// Carries out the machine's actions; writes wait in the outbox for the end of the event.
    private func perform(_ actions: [HTTP2Connection.Action]) {
        for action in actions {
            switch action {
            case .write(let bytes): outbox += bytes
            case .headers(let id, let fields, let endStream): receivedHeaders(fields, on: id, endStream: endStream)
            case .data(let id, let bytes, let endStream):
                guard let exchange = active[id] else { continue }
                exchange.received += bytes
                if endStream { complete(id) }
            case .streamReset(let id, let code):
                guard let exchange = active.removeValue(forKey: id) else { continue }
                exchange.finish(
                    .failure(code == .refusedStream ? TransportError.http2Refused : TransportError.http2StreamError(code)))
            case .pingAcknowledged: break
            case .goAway(_, let code, _):
                goAwayCode = code
                events.goingAway(self)
                // Not yet sent: they go to another connection.
                while let exchange = waiting.popFirst() { exchange.finish(.failure(TransportError.http2Unsent)) }
            case .closeConnection(let code):
                flushOutbox()
                closeSocket(reset: false, failing: TransportError.http2GoAway(code, sentByServer: false))
                return
            }
        }
    }

    private func receivedHeaders(_ fields: [HPACKHeader], on id: UInt32, endStream: Bool) {
        guard let exchange = active[id] else { return }
        if exchange.firstByte == nil { exchange.firstByte = loop.wokeAt }
        if exchange.head == nil {
            do {
                let head = try HTTPResponse(http2Fields: fields)
                // An interim (1xx) response is followed by the real one.
                if head.status >= 200 || endStream { exchange.head = head }
            } catch {
                active[id] = nil
                perform(machine.resetStream(id, code: .protocolError))
                exchange.finish(.failure(TransportError.http2StreamError(.protocolError)))
                return
            }
        }
        if endStream { complete(id) }
    }

    private func complete(_ id: UInt32) {
        guard let exchange = active.removeValue(forKey: id) else { return }
        guard exchange.head != nil else {
            return exchange.finish(.failure(TransportError.http2StreamError(.protocolError)))
        }
        exchange.finish(.success(exchange.response(at: loop.wokeAt)))
    }

    // MARK: After each event

    /// Opens streams for waiting requests, writes what the event produced, closes a connection the server is done
    /// with, and sets the timer.
    func settle() {
        guard phase != .closed else { return }
        if phase == .open {
            openStreams()
            checkHolding()
        }
        flushOutbox()
        guard phase != .closed, load == 0 else { return }
        if goAwayCode != nil { return closeSocket(reset: false, failing: TransportError(.closed)) }
        if phase == .open && idleSince == nil {
            let now = loop.now
            idleSince = now
            watch(until: now + idleTimeout)
        }
    }

    private func flushOutbox() {
        guard !outbox.isEmpty, phase != .closed else { return }
        let bytes = outbox
        outbox.removeAll(keepingCapacity: true)
        if case .failed(let error) = core.send(bytes) { fail(error) }
    }

    /// The earliest instant something may be due: the connect deadline, a request's deadline, or the idle timeout.
    private var nextDue: MonotonicInstant? {
        var due = phase == .open ? nil : connectDeadline
        for exchange in active.values { due = min(due ?? exchange.deadline, exchange.deadline) }
        for exchange in waiting where !exchange.isFinished { due = min(due ?? exchange.deadline, exchange.deadline) }
        if let idleSince { due = min(due ?? idleSince + idleTimeout, idleSince + idleTimeout) }
        return due
    }

    /// Makes sure the one timer fires no later than `instant`. It only ever moves earlier, and one that fires early
    /// re-arms for what is then due: a timer per request would cost a schedule and a cancel each.
    private func watch(until instant: MonotonicInstant) {
        if let timer {
            if timer.at <= instant { return }
            loop.cancel(timer.id)
        }
        // Strong on purpose, as the HTTP/1.1 connection's: the timer holds the connection until it fires or is cancelled.
        timer = (loop.schedule(at: instant) { self.timerFired() }, instant)
    }

    private func timerFired() {
        timer = nil
        guard phase != .closed else { return }
        let now = loop.wokeAt
        if let connectDeadline, phase != .open, now >= connectDeadline {
            return fail(
                phase == .handshaking
                    ? TransportError(.timedOut(.tlsHandshake), "TLS handshake")
                    : TransportError(.timedOut(.connecting), TransportError.unansweredConnectDetail))
        }
        for (id, exchange) in active where now >= exchange.deadline {
            active[id] = nil
            perform(machine.resetStream(id, code: .cancel))
            exchange.finish(
                .failure(
                    exchange.firstByte == nil
                        ? TransportError(.timedOut(.awaitingResponse))
                        : TransportError(.timedOut(.readingResponse), TransportError.incompleteDetail)))
        }
        for exchange in waiting where now >= exchange.deadline {
            exchange.finish(.failure(TransportError(.timedOut(.awaitingResponse), "waiting for an HTTP/2 stream")))
        }
        waiting.removeAll { $0.isFinished }
        if let idleSince, load == 0, now >= idleSince + idleTimeout {
            return close(reset: true)
        }
        settle()
        if phase != .closed, let due = nextDue { watch(until: due) }
    }

    // MARK: Closing

    private func fail(_ error: TransportError) {
        closeSocket(reset: false, failing: error)
    }

    /// Closes the socket once. Requests sent fail with `error`; those never sent fail with it too before the
    /// connection opened (the connect's failure is theirs), and after that are handed back to be sent elsewhere.
    private func closeSocket(reset: Bool, failing error: TransportError) {
        closeSocket(reset: reset, failingWith: error)
    }

    private func closeSocket(reset: Bool, failingWith error: any Error) {
        guard phase != .closed else { return }
        let wasOpen = phase == .open
        phase = .closed
        OpenSockets.http.subtract(1, ordering: .relaxed)
        if let timer { loop.cancel(timer.id) }
        timer = nil
        core.close(reset: reset)
        let sent = active.values
        active = [:]
        holding = []
        for exchange in sent { exchange.finish(.failure(error)) }
        let unsent: any Error = wasOpen ? TransportError.http2Unsent : error
        while let exchange = waiting.popFirst() { exchange.finish(.failure(unsent)) }
        events.closed(self)
    }
}
