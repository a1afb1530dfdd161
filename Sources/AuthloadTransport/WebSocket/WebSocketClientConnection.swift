import AuthloadCore
import AuthloadWire
import CSystem
import Foundation

/// A client WebSocket on one loop: opened by an upgrade request on a ``HTTPClientConnection`` (connect,
/// TLS, the `GET` and its timeouts are the HTTP client's), then, once the `101` checks out, the socket's
/// ``WebSocketFrameConnection``'s; this serves the caller's receives and closes.
///
/// `@unchecked Sendable`: callers on any task reach it only through ``EventLoop/suspend(_:onCancel:)``
/// and `loop.execute`; every field is touched on `loop`'s thread alone.
final class WebSocketClientConnection: ConnectionUpgrade, WebSocketFrameConnectionDelegate, @unchecked Sendable {
    /// What the opening handshake sends and checks.
    struct Upgrade {
        var bytes: [UInt8]
        var key: String
        var protocols: [String]
        /// When the caller handed the open to the transport.
        var start: MonotonicInstant
        var deadline: MonotonicInstant
        var connectDeadline: MonotonicInstant
        var timeout: Duration
    }

    let loop: EventLoop
    /// What the answer to the upgrade is checked against; nil once it is answered (or the opening failed), so an open
    /// WebSocket does not hold its request's bytes, key and offered protocols for its whole life.
    private var upgrade: Upgrade?
    /// The connection carrying the upgrade request, until it is answered.
    private var opening: HTTPClientConnection?
    private var opener: LoopWaiter<WebSocketHandle>?

    /// What the opening handshake answered, for ``WebSocketHandle``: set once, on the loop, before the opener hears of
    /// the socket, and never changed after, so the handle's callers on other threads read it safely.
    private(set) var opened = (handshake: HTTPResponse(status: 0), subprotocol: String?.none)
    private var frames: WebSocketFrameConnection?
    /// Messages nobody was waiting for, with the instant each arrived.
    private var messages = FIFOQueue<(message: WebSocketMessage, arrived: MonotonicInstant)>()
    private var receivers: [LoopWaiter<StampedMessage>] = []
    /// A consumer that reads every message here as it arrives (``consume(_:then:)``), who hears its end, and its wait's
    /// timer.
    private var consumer: (any WebSocketMessageConsumer)?
    private var consumerDone: (@Sendable (Result<Void, any Error>) -> Void)?
    private var consumerTimer: TimerID?
    private var closers: [CheckedContinuation<Void, Never>] = []
    private(set) var closure: WebSocketClosed?
    /// `closure` for callers off the loop, so a send to a closed socket fails without a hop.
    let sharedClosure = Locked<WebSocketClosed?>(nil)

    /// Starts connecting; `opener` resumes with the open WebSocket or the reason it did not open.
    ///
    /// - Parameter makeStream: wraps the connected socket: ``PlainStream`` for `ws://`, a TLS stream for `wss://`.
    init(
        loop: EventLoop, address: SocketAddress, source: SourceAddresses? = nil, target: String = "", upgrade: Upgrade,
        opener: LoopWaiter<WebSocketHandle>, makeStream: (Int32) throws(TransportError) -> any ByteStream = { PlainStream(fd: $0) }
    ) throws(TransportError) {
        self.loop = loop
        self.upgrade = upgrade
        self.opener = opener
        // No idle timeout applies: the connection is handed over or closed once the upgrade is answered.
        let connection = try HTTPClientConnection(
            loop: loop, address: address, source: source, target: target, idleTimeout: .zero, makeStream: makeStream
        ) { _ in }
        opening = connection
        connection.send(
            PendingRequest(upgrade: upgrade.bytes, for: self), method: "GET", start: upgrade.start, deadline: upgrade.deadline,
            connectDeadline: upgrade.connectDeadline, upgrade: true)
        // The request's bytes now travel with the pending request, which the HTTP connection drops once it is answered.
        self.upgrade?.bytes = []
    }

    // MARK: Opening handshake

    /// Ends an opening that did not succeed: the socket closes and the opener hears `error`.
    func fail(_ error: any Error) {
        let connection = opening
        opening = nil
        upgrade = nil
        opener?.resume(.failure(error))
        opener = nil
        connection?.close()
    }

    func failed(_ error: any Error) {
        guard (error as? TransportError)?.kind == .timeout, let timeout = upgrade?.timeout else { return fail(error) }
        fail(TransportError(.timeout, "the WebSocket handshake did not finish within \(timeout)"))
    }

    func upgraded(_ response: HTTPResponse, leftover: [UInt8], on connection: HTTPClientConnection) -> (any EventHandler)? {
        opening = nil
        guard let upgrade = upgrade.take() else { return nil }
        guard response.status == 101 else {
            fail(WebSocketUpgradeRejected(response: response))
            return nil
        }
        let subprotocol: String?
        do {
            subprotocol = try WebSocketHandshake.validate(response: response, key: upgrade.key, offeredProtocols: upgrade.protocols)
        } catch {
            fail(TransportError(.protocolViolation, error.description))
            return nil
        }
        OpenSockets.webSockets.add(1, ordering: .relaxed)
        let frames = WebSocketFrameConnection(core: connection.core, role: .client)
        frames.delegate = self
        self.frames = frames
        // Frames that came in the same read as the 101 belong to the WebSocket, not to HTTP.
        frames.start(leftover: leftover)
        // The header fields are checked: a held socket need not keep them (a few hundred bytes each); nor its own copy of
        // the usual reason (a literal takes no memory).
        let reason = response.reason == Self.switchingProtocols ? Self.switchingProtocols : response.reason
        opened = (HTTPResponse(status: response.status, reason: reason, timing: response.timing), subprotocol)
        opener?.resume(.success(WebSocketHandle(connection: self)))
        opener = nil
        return frames
    }

    private static let switchingProtocols = "Switching Protocols"

    // MARK: Open WebSocket

    func send(_ message: WebSocketMessage) throws {
        if let closure { throw closure }
        guard let frames else { throw TransportError(.closed, "the WebSocket is not open") }
        try frames.send(message)
    }

    /// Hands the caller the oldest queued message, or waits for one until `deadline`.
    func receive(_ waiter: LoopWaiter<StampedMessage>, deadline: MonotonicInstant, timeout: Duration) {
        if let (message, arrived) = messages.popFirst() {
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

    /// Runs `consumer` on the loop, message by message as they arrive (the queued ones first), until it is done,
    /// then calls `done`; the socket's end or a failed send calls it with the error.
    ///
    /// The caller waits once for the whole exchange, or not at all (``WebSocketHandle/consumption(of:)``): a task
    /// suspended for every message keeps the frames of that chain of calls for its whole life.
    func consume(_ consumer: any WebSocketMessageConsumer, then done: @escaping @Sendable (Result<Void, any Error>) -> Void) {
        guard self.consumer == nil else {
            return done(.failure(TransportError(.other, "the WebSocket already has a consumer")))
        }
        self.consumer = consumer
        consumerDone = done
        drive(nil)
    }

    /// Ends `consumer` early (its task was cancelled, or its holder stopped it) with `error`, if it still runs here.
    func stopConsumer(_ consumer: any WebSocketMessageConsumer, _ error: any Error) {
        guard self.consumer === consumer else { return }
        endConsumer(.failure(error))
    }

    /// Asks the consumer what next, after `received`, and does it, until it waits or is done.
    private func drive(_ received: ReceivedWebSocketMessage?) {
        var received = received
        while let consumer {
            switch consumer.next(after: received) {
            case .finish:
                return endConsumer(.success(()))
            case .send(let message):
                do {
                    try send(message)
                } catch {
                    return endConsumer(.failure(error))
                }
                received = nil
            case .wait(let timeout):
                if let (message, arrived) = messages.popFirst() {
                    received = ReceivedWebSocketMessage(message, queued: MonotonicInstant.now - arrived)
                    continue
                }
                if let closure { return endConsumer(.failure(closure)) }
                consumerTimer = loop.schedule(at: loop.now + timeout) { [weak self] in
                    guard let self else { return }
                    consumerTimer = nil
                    drive(nil)
                }
                return
            }
        }
    }

    private func endConsumer(_ result: Result<Void, any Error>) {
        if let consumerTimer { loop.cancel(consumerTimer) }
        consumerTimer = nil
        consumer = nil
        let done = consumerDone
        consumerDone = nil
        done?(result)
    }

    /// Forgets receivers that timed out or were cancelled, so an idle socket polled often does not grow.
    func pruneReceivers() {
        receivers.removeAll { !$0.isPending }
    }

    func close(code: Int, reason: String, deadline: MonotonicInstant, continuation: CheckedContinuation<Void, Never>) {
        guard closure == nil, let frames else {
            continuation.resume()
            return
        }
        closers.append(continuation)
        frames.close(code: code, reason: reason, deadline: deadline)
    }

    /// Drops the WebSocket without a closing handshake (the client that opened it shuts down).
    func abort() {
        if let frames {
            frames.abort()
        } else {
            fail(TransportError(.closed, "the client was shut down"))
        }
    }

    /// Stamped with the loop's reading of the clock for this round, the instant the bytes were found readable: the
    /// shell reads no clock of its own.
    func received(_ message: WebSocketMessage) {
        let arrived = loop.wokeAt
        if consumer != nil {
            if let consumerTimer { loop.cancel(consumerTimer) }
            consumerTimer = nil
            return drive(ReceivedWebSocketMessage(message, queued: MonotonicInstant.now - arrived))
        }
        while !receivers.isEmpty {
            let receiver = receivers.removeFirst()
            if receiver.isPending {
                receiver.resume(.success(StampedMessage(message: message, arrived: arrived)))
                return
            }
        }
        messages.append((message, arrived))
    }

    /// A message and the instant the loop read it: the caller works out how long it
    /// waited once its task runs, so neither the queue nor the task's wake-up passes for server time.
    struct StampedMessage: Sendable {
        var message: WebSocketMessage
        var arrived: MonotonicInstant
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
        if consumer != nil { endConsumer(.failure(closed)) }
        for closer in closers { closer.resume() }
    }
}
