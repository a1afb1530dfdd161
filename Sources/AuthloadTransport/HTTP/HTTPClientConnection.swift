import AuthloadCore
import AuthloadWire
import CSystem
import Foundation

/// A request in flight: the bytes to write, and who waits for the answer.
struct PendingRequest {
    let bytes: [UInt8]
    let waiter: Waiter

    enum Waiter {
        /// A caller waiting for the response. Unsafe rather than checked: the checked one allocates per
        /// request, and exactly-once is kept by construction: the connection's state hands the request
        /// back once, in a response or a failure.
        case response(UnsafeContinuation<HTTPResponse, any Error>)
        /// A WebSocket opening, waiting for the answer to its upgrade request.
        case upgrade(any ConnectionUpgrade)
    }

    init(bytes: [UInt8], continuation: UnsafeContinuation<HTTPResponse, any Error>) {
        self.bytes = bytes
        self.waiter = .response(continuation)
    }

    init(upgrade bytes: [UInt8], for opening: any ConnectionUpgrade) {
        self.bytes = bytes
        self.waiter = .upgrade(opening)
    }

    func fail(_ error: any Error) {
        switch waiter {
        case .response(let continuation): continuation.resume(throwing: error)
        case .upgrade(let opening): opening.failed(error)
        }
    }
}

/// What opens a WebSocket over a ``HTTPClientConnection``: it sends the upgrade request, and is told the answer.
protocol ConnectionUpgrade: AnyObject, Sendable {
    /// The server answered the upgrade request. Returns what takes the socket over (the connection then
    /// forwards its events there, and that closes it), or nil to have the connection close.
    ///
    /// - Parameter leftover: bytes that arrived behind the response: the first frames.
    func upgraded(_ response: HTTPResponse, leftover: [UInt8], on connection: HTTPClientConnection) -> (any EventHandler)?

    /// The upgrade failed before an answer came (connect, handshake, timeout, closed).
    func failed(_ error: any Error)
}

/// One client connection on one event loop: connect, secure (TLS, when its stream does it), write a
/// request, read the response; or, for a WebSocket, hand the socket over once the upgrade is answered.
///
/// This is the socket side; what the events mean (timeouts, parsing, timing, keep-alive) is decided by
/// its ``HTTPClientConnectionState``, which it tells what happened and when and whose ``HTTPClientConnectionState/Action``
/// it carries out. Touched only on its loop's thread. It serves one request at a time and reports back to
/// its owner when it closes, so the owner opens a new one next time.
final class HTTPClientConnection: EventHandler {
    typealias State = HTTPClientConnectionState<PendingRequest>

    let loop: any ConnectionLoop
    /// The socket, its stream, what epoll reports and what is queued; handed to the frames after an upgrade.
    let core: ConnectionCore
    private var state: State
    /// The one timer, set for ``HTTPClientConnectionState/timerDue``.
    private var timer: (id: TimerID, at: MonotonicInstant)?
    /// The socket is this connection's to close: not yet closed, nor handed over after an upgrade.
    private var socketOpen = true
    private let onClose: (HTTPClientConnection) -> Void

    /// - Parameters:
    ///   - source: where to connect from (a source address and a local port); the system's choice when nil.
    ///   - target: `host:port`, for messages.
    ///   - makeStream: wraps the connected socket: ``PlainStream`` for TCP, a TLS stream for HTTPS.
    convenience init(
        loop: EventLoop, address: SocketAddress, source: SourceAddresses? = nil, target: String = "", idleTimeout: Duration,
        makeStream: (Int32) throws(TransportError) -> any ByteStream = { PlainStream(fd: $0) },
        onClose: @escaping (HTTPClientConnection) -> Void
    ) throws(TransportError) {
        let fd = try Sockets.connect(to: address, from: source, target: target)
        let stream: any ByteStream
        do {
            stream = try makeStream(fd)
        } catch {
            SystemCalls.close(fd)
            throw error
        }
        self.init(loop: loop, stream: stream, idleTimeout: idleTimeout, onClose: onClose)
    }

    /// A connection over `stream`, whose socket is connecting (or connected): what the socket initializer above ends
    /// with, and what a test starts from with a scripted stream on a loop it drives.
    init(loop: any ConnectionLoop, stream: any ByteStream, idleTimeout: Duration, onClose: @escaping (HTTPClientConnection) -> Void) {
        self.loop = loop
        self.state = State(idleTimeout: idleTimeout)
        self.onClose = onClose
        // Writable once connected; registered with the loop by the first `send`.
        core = ConnectionCore(loop: loop, stream: stream, interest: EPOLLOUT.rawValue)
        OpenSockets.http.add(1, ordering: .relaxed)
    }

    var isIdle: Bool { state.isIdle }

    /// Sends a request; the connection must be idle or still connecting.
    ///
    /// - Parameter connectDeadline: when a connection still connecting (or in its TLS handshake) gives up.
    /// - Parameter upgrade: the request asks for a WebSocket; its waiter must be an upgrade.
    func send(
        _ request: PendingRequest, method: String, start: MonotonicInstant, deadline: MonotonicInstant,
        connectDeadline: MonotonicInstant, upgrade: Bool = false
    ) {
        perform(
            state.send(
                request, method: method, start: start, deadline: deadline, connectDeadline: connectDeadline, upgrade: upgrade))
        if !core.isRegistered { writeWhileConnecting() }
    }

    /// A new connection's first request, written before the socket is registered with the loop. On loopback, and
    /// wherever the TCP handshake is over by the time the request is queued, that saves the round of `epoll_wait` for
    /// the socket to turn writable and the `epoll_ctl` that turns it to reading: a connection per flow iteration then
    /// costs the system calls wrk's do. A connect still under way takes no bytes, and the socket waits for EPOLLOUT.
    private func writeWhileConnecting() {
        if state.phase == .connecting, let bytes = state.exchange?.request.bytes, let progress = core.sendWhileConnecting(bytes) {
            if case .failed(let error) = progress {
                perform(state.streamFailed(error))
                return
            }
            let now = loop.now
            state.connected(at: now)
            // Plain TCP has no handshake; the `.write` this asks for is done.
            _ = state.secured(at: now, secure: false)
        }
        do {
            try core.register(handler: self)
        } catch {
            perform(state.streamFailed(error))
        }
    }

    func handleEvents(_ events: UInt32) {
        switch state.phase {
        case .connecting: finishConnect(events)
        case .handshaking: continueHandshake()
        case .open:
            if events & EPOLLOUT.rawValue != 0 { flush() }
            if events & (EPOLLIN.rawValue | EPOLLHUP.rawValue | EPOLLERR.rawValue) != 0 { readAvailable() }
        // An upgraded socket's events go to its new handler (``handOver(to:)``).
        case .upgraded, .closed: break
        }
    }

    /// Closes the socket; a request still in flight fails with `error`.
    ///
    /// - Parameter reset: close with a reset, leaving no TIME_WAIT (``Sockets/resetOnClose(_:)``); only for an
    ///   idle connection, which has nothing in flight.
    func close(failing error: TransportError = TransportError(.closed), reset: Bool = false) {
        guard socketOpen else { return }
        let idle = state.isIdle
        let request = state.close()
        closeSocket(reset: reset && idle)
        request?.fail(error)
    }

    /// Carries out what the state decided, then sets the timer where the state wants it.
    private func perform(_ action: consuming State.Action) {
        // Consumed, so the response in it moves to its waiter instead of being copied, a retain for each of its buffers.
        switch consume action {
        case .wait: break
        case .write: written(core.send(state.exchange?.request.bytes ?? []))
        case .respond(let request, let response, let close):
            if close { closeSocket(reset: false) }
            guard case .response(let continuation) = request.waiter else { preconditionFailure("a response to an upgrade") }
            continuation.resume(returning: response)
        case .fail(let request, let error):
            closeSocket(reset: false)
            request.fail(error)
        case .close(let reset):
            closeSocket(reset: reset)
        case .upgrade(let request, let response, let leftover):
            guard case .upgrade(let opening) = request.waiter else { preconditionFailure("an upgrade for a plain request") }
            handOver(to: opening.upgraded(response, leftover: leftover, on: self))
        }
        guard socketOpen, state.timerDue != timer?.at else { return }
        if let timer { loop.cancel(timer.id) }
        // Strong on purpose: a weak reference gives the connection a side table, and then every retain and
        // release of it takes the slow path. The timer holds it until it fires or `closeSocket` cancels it.
        timer = state.timerDue.map { due in (loop.schedule(at: due) { self.timerFired() }, due) }
    }

    private func timerFired() {
        timer = nil
        perform(state.timerFired(at: loop.wokeAt))
    }

    private func closeSocket(reset: Bool) {
        guard letGoOfSocket() else { return }
        core.close(reset: reset)
        onClose(self)
    }

    /// The socket is `handler`'s from now on (it closes it), or closes now when the upgrade was refused.
    private func handOver(to handler: (any EventHandler)?) {
        guard let handler else {
            closeSocket(reset: false)
            return
        }
        core.handOver(to: handler)
        letGoOfSocket()
    }

    /// Stops owning the socket, closed or handed over: no longer counted as an HTTP connection, no timer.
    /// False when it was let go of already.
    @discardableResult
    private func letGoOfSocket() -> Bool {
        guard socketOpen else { return false }
        socketOpen = false
        OpenSockets.http.subtract(1, ordering: .relaxed)
        if let timer { loop.cancel(timer.id) }
        timer = nil
        return true
    }

    /// The socket turned writable: connected, unless epoll also reports an error (then SO_ERROR says which).
    private func finishConnect(_ events: UInt32) {
        if let failure = core.connectFailure(events: events) {
            perform(state.streamFailed(TransportError.socket(failure, .connecting)))
            return
        }
        state.connected(at: loop.now)
        continueHandshake()
    }

    private func continueHandshake() {
        switch core.handshake() {
        case .done: perform(state.secured(at: loop.now, secure: core.stream.isSecure))
        case .pending: break
        case .failed(let error): perform(state.streamFailed(error))
        }
    }

    private func flush() { written(core.flush()) }

    private func written(_ progress: ConnectionCore.Progress) {
        if case .failed(let error) = progress { perform(state.streamFailed(error)) }
    }

    private func readAvailable() {
        let end = core.read { chunk in
            perform(state.received(chunk, at: loop.wokeAt))
            // Read on while open: bytes after a response are unsolicited, and must not wait for the next request.
            return socketOpen
        }
        switch end {
        case .paused: break
        case .end: perform(state.streamEnded(at: loop.wokeAt))
        case .failed(let error): perform(state.streamFailed(error))
        }
    }
}
