import AuthloadCore
import AuthloadWire
import CSystem
import Foundation

/// A client WebSocket on one loop: connect, secure the stream, send the upgrade `GET`, check the
/// `101`, then hand the socket to a ``WebSocketFrameConnection`` and serve the caller's receives.
///
/// `@unchecked Sendable`: callers on any task reach it only through ``EventLoop/suspend(_:onCancel:)``
/// and `loop.execute`; every field is touched on `loop`'s thread alone.
final class WebSocketClientConnection: EventHandler, WebSocketFrameConnectionDelegate, @unchecked Sendable {
    enum Phase { case connecting, securing, upgrading, open, closed }

    /// What the opening handshake sends and checks.
    struct Upgrade {
        var bytes: [UInt8]
        var key: String
        var protocols: [String]
        /// Monotonic nanoseconds when the caller handed the open to the transport.
        var start: Int64
        var deadline: Int64
        var connectDeadline: Int64
        var timeout: Duration
    }

    let loop: EventLoop
    let fd: Int32
    let stream: any ByteStream
    private(set) var phase = Phase.connecting
    private let upgrade: Upgrade
    private var written = 0
    private var parser = HTTPResponseParser()
    private var interest = EPOLLOUT.rawValue
    private var opener: LoopWaiter<ClientWebSocket>?
    private var connected: Int64?
    private var secured: Int64?
    private var firstByte: Int64?
    private var timers: [TimerID] = []

    private var frames: WebSocketFrameConnection?
    /// Messages nobody was waiting for, with the monotonic nanoseconds they arrived at.
    private var messages: [(message: WebSocketMessage, arrived: Int64)] = []
    private var messageHead = 0
    private var receivers: [LoopWaiter<StampedMessage>] = []
    private var closers: [CheckedContinuation<Void, Never>] = []
    private(set) var closure: WebSocketClosed?
    /// `closure` for callers off the loop, so a send to a closed socket fails without a hop.
    let sharedClosure = Locked<WebSocketClosed?>(nil)

    /// Starts connecting; `opener` resumes with the open WebSocket or the reason it did not open.
    ///
    /// - Parameter makeStream: wraps the connected socket: ``PlainStream`` for `ws://`, a TLS stream for `wss://`.
    init(
        loop: EventLoop, address: SocketAddress, source: SourceAddresses? = nil, target: String = "", upgrade: Upgrade,
        opener: LoopWaiter<ClientWebSocket>, makeStream: (Int32) throws(TransportError) -> any ByteStream = { PlainStream(fd: $0) }
    ) throws(TransportError) {
        self.loop = loop
        self.upgrade = upgrade
        fd = try Sockets.connect(to: address, from: source, target: target)
        do {
            stream = try makeStream(fd)
        } catch {
            Glibc.close(fd)
            throw error
        }
        self.opener = opener
        loop.register(fd, events: EPOLLOUT.rawValue, handler: self)
        timers.append(
            loop.schedule(at: upgrade.deadline) { [weak self] in
                guard let self else { return }
                fail(
                    TransportError(
                        phase == .connecting || phase == .securing ? .connectTimeout : .timeout,
                        "the WebSocket handshake did not finish within \(upgrade.timeout)"))
            })
        if upgrade.connectDeadline < upgrade.deadline {
            timers.append(
                loop.schedule(at: upgrade.connectDeadline) { [weak self] in
                    // The connect timeout covers the TLS handshake too, as for HTTP requests.
                    guard let self, phase == .connecting || phase == .securing else { return }
                    fail(TransportError(.connectTimeout))
                })
        }
    }

    func handleEvents(_ events: UInt32) {
        switch phase {
        case .connecting:
            finishConnect()
        case .securing:
            continueHandshake()
        case .upgrading:
            if events & EPOLLOUT.rawValue != 0 { writeUpgrade() }
            if events & (EPOLLIN.rawValue | EPOLLHUP.rawValue | EPOLLERR.rawValue) != 0 { readResponse() }
        case .open:
            if let frames { frames.handleEvents(events) }
        case .closed:
            break
        }
    }

    // MARK: Opening handshake

    /// Ends an opening that did not succeed: the socket closes and the opener hears `error`.
    func fail(_ error: any Error) {
        guard phase != .open, phase != .closed else { return }
        phase = .closed
        for timer in timers { loop.cancel(timer) }
        stream.shutdown()
        loop.close(fd)
        opener?.resume(.failure(error))
        opener = nil
    }

    private func finishConnect() {
        var code: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        getsockopt(fd, SOL_SOCKET, SO_ERROR, &code, &length)
        guard code == 0 else {
            fail(SocketError.transportError(code, during: "connect"))
            return
        }
        connected = Monotonic.now
        phase = .securing
        continueHandshake()
    }

    private func continueHandshake() {
        switch stream.handshake() {
        case .done:
            secured = stream.isSecure ? Monotonic.now : connected
            phase = .upgrading
            setInterest(EPOLLIN.rawValue)
            writeUpgrade()
        case .wouldBlock(let wanted):
            setInterest(wanted)
        case .end:
            fail(TransportError.closedDuringHandshake)
        case .failed(let error):
            fail(error.duringHandshake())
        }
    }

    private func writeUpgrade() {
        switch stream.write(upgrade.bytes, from: &written) {
        case .done: setInterest(EPOLLIN.rawValue)
        case .wouldBlock(let wanted): setInterest(EPOLLIN.rawValue | wanted)
        case .end: fail(TransportError(.closed, "the server closed the connection before the WebSocket handshake was sent"))
        case .failed(let error): fail(error)
        }
    }

    private func readResponse() {
        guard phase == .upgrading else { return }
        let stop = stream.read(into: loop.readBuffer) { chunk in
            if firstByte == nil { firstByte = Monotonic.now }
            parser.feed(chunk)
            return !parseResponse() && phase == .upgrading
        }
        switch stop {
        case .stopped, .drained: break
        case .wants(let wanted): setInterest(EPOLLIN.rawValue | wanted)
        case .end:
            // A rejection may be delimited by the close itself.
            parser.endOfStream()
            if !parseResponse() {
                fail(TransportError(.closed, "the server closed the connection before answering the WebSocket handshake"))
            }
        case .failed(let error): fail(error)
        }
    }

    /// Acts on a complete response; false while more bytes are needed.
    private func parseResponse() -> Bool {
        do {
            guard case .response(var response, _) = try parser.next() else { return false }
            let now = Monotonic.now
            let connected = connected ?? upgrade.start
            let secured = secured ?? connected
            response.timing = RequestTiming(
                connect: .nanoseconds(connected - upgrade.start),
                tlsHandshake: .nanoseconds(secured - connected),
                timeToFirstByte: .nanoseconds((firstByte ?? now) - upgrade.start),
                total: .nanoseconds(now - upgrade.start))
            finishUpgrade(response)
        } catch {
            fail(TransportError(.protocolViolation, "WebSocket handshake response: \(error)"))
        }
        return true
    }

    private func finishUpgrade(_ response: HTTPResponse) {
        guard response.status == 101 else {
            fail(WebSocketUpgradeRejected(response: response))
            return
        }
        let subprotocol: String?
        do {
            subprotocol = try WebSocketHandshake.validate(response: response, key: upgrade.key, offeredProtocols: upgrade.protocols)
        } catch {
            fail(TransportError(.protocolViolation, error.description))
            return
        }
        phase = .open
        OpenSockets.webSockets.add(1, ordering: .relaxed)
        for timer in timers { loop.cancel(timer) }
        timers = []
        let frames = WebSocketFrameConnection(stream: stream, loop: loop, role: .client, interest: interest)
        frames.delegate = self
        self.frames = frames
        // Frames that came in the same read as the 101 belong to the WebSocket, not to HTTP.
        frames.start(leftover: parser.takeUnparsedBytes())
        opener?.resume(.success(ClientWebSocket(handshake: response, subprotocol: subprotocol, connection: self)))
        opener = nil
    }

    private func setInterest(_ events: UInt32) {
        guard events != interest else { return }
        interest = events
        loop.modify(fd, events: events)
    }

    // MARK: Open WebSocket

    func send(_ message: WebSocketMessage) throws {
        if let closure { throw closure }
        guard let frames else { throw TransportError(.closed, "the WebSocket is not open") }
        try frames.send(message)
    }

    /// Hands the caller the oldest queued message, or waits for one until `deadline`.
    func receive(_ waiter: LoopWaiter<StampedMessage>, deadline: Int64, timeout: Duration) {
        if messageHead < messages.count {
            let (message, arrived) = messages[messageHead]
            messageHead += 1
            if messageHead == messages.count {
                messages.removeAll(keepingCapacity: messages.capacity <= 16)
                messageHead = 0
            }
            waiter.resume(.success(StampedMessage(message: message, arrived: arrived)))
            return
        }
        if let closure {
            waiter.resume(.failure(closure))
            return
        }
        receivers.append(waiter)
        waiter.expire(at: deadline, with: TransportError(.timeout, "no WebSocket message arrived within \(timeout)")) { [weak self] in
            self?.pruneReceivers()
        }
    }

    /// Forgets receivers that timed out or were cancelled, so an idle socket polled often does not grow.
    func pruneReceivers() {
        receivers.removeAll { !$0.isPending }
    }

    func close(code: Int, reason: String, deadline: Int64, continuation: CheckedContinuation<Void, Never>) {
        guard closure == nil, let frames else {
            continuation.resume()
            return
        }
        closers.append(continuation)
        frames.close(code: code, reason: reason, deadline: deadline)
    }

    /// Drops the WebSocket without a closing handshake (the client that opened it shuts down).
    func abort() {
        switch phase {
        case .open: frames?.abort()
        case .connecting, .securing, .upgrading: fail(TransportError(.closed, "the client was shut down"))
        case .closed: break
        }
    }

    func received(_ message: WebSocketMessage) {
        while !receivers.isEmpty {
            let receiver = receivers.removeFirst()
            if receiver.isPending {
                receiver.resume(.success(StampedMessage(message: message, arrived: Monotonic.now)))
                return
            }
        }
        messages.append((message, Monotonic.now))
    }

    /// A message and the monotonic nanoseconds the loop read it at: the caller works out how long it
    /// waited once its task runs, so neither the queue nor the task's wake-up passes for server time.
    struct StampedMessage: Sendable {
        var message: WebSocketMessage
        var arrived: Int64
    }

    func closed(_ closed: WebSocketClosed) {
        if closure == nil { OpenSockets.webSockets.subtract(1, ordering: .relaxed) }
        // The phase stays open: the frame connection may still be writing the last Close.
        closure = closed
        sharedClosure.withLock { $0 = closed }
        let receivers = self.receivers
        let closers = self.closers
        self.receivers = []
        self.closers = []
        for receiver in receivers { receiver.resume(.failure(closed)) }
        for closer in closers { closer.resume() }
    }
}
