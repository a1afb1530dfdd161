import AuthloadCore
import AuthloadWire
import CSystem
import Foundation

/// Hears an open WebSocket's messages and its end, on the connection's loop.
protocol WebSocketFrameConnectionDelegate: AnyObject {
    func received(_ message: WebSocketMessage)
    /// Called once, when the WebSocket closed for whatever reason.
    func closed(_ closed: WebSocketClosed)
}

/// An open WebSocket on one loop, for either end: the I/O shell around a ``WebSocketChannel``.
///
/// It reads the stream into the channel and carries out what the channel answers: queue bytes,
/// hand messages to its delegate, and drop the socket once the channel says the WebSocket is over
/// (after writing what is queued, for at most ``linger``). Touched only on its loop's thread. The
/// owner of the socket's epoll registration forwards events here with ``handleEvents(_:)``.
final class WebSocketFrameConnection: EventHandler {
    /// How long queued bytes (the final Close) may take to leave once the WebSocket is over.
    static let linger = Duration.seconds(2)

    let loop: EventLoop
    let stream: any ByteStream
    /// Strong until the socket is dropped, then released: an open socket keeps its listener alive.
    var delegate: (any WebSocketFrameConnectionDelegate)?
    private var channel: WebSocketChannel
    private var output: [UInt8] = []
    private var written = 0
    private var interest: UInt32
    private var started = false
    private var dropAfterFlush = false
    private(set) var isDropped = false
    private var closeTimer: TimerID?
    private var lingerTimer: TimerID?

    /// - Parameter interest: the epoll events the socket is registered for now.
    init(stream: any ByteStream, loop: EventLoop, role: WebSocketChannel.Role, interest: UInt32) {
        self.stream = stream
        self.loop = loop
        self.interest = interest
        channel = WebSocketChannel(role: role)
    }

    /// Whether the WebSocket is over (closed, failed or dropped), though its last bytes may still be leaving.
    var isClosed: Bool { channel.isClosed }

    /// Begins I/O: writes `prefix` (the handshake response, on a server) before any frame queued so
    /// far, then takes `leftover`, the bytes that arrived behind the handshake.
    func start(prefix: [UInt8] = [], leftover: [UInt8] = []) {
        started = true
        if !prefix.isEmpty { output.insert(contentsOf: prefix, at: 0) }
        flush()
        if !leftover.isEmpty { perform(channel.received(leftover)) }
        // Decrypted input waiting inside a TLS stream is invisible to epoll.
        if stream.hasBufferedInput { readAvailable() }
    }

    func handleEvents(_ events: UInt32) {
        if events & EPOLLOUT.rawValue != 0 { flush() }
        if events & (EPOLLIN.rawValue | EPOLLHUP.rawValue | EPOLLERR.rawValue) != 0 { readAvailable() }
    }

    /// Queues one message; before ``start(prefix:leftover:)`` it waits behind the handshake response.
    ///
    /// - Throws: ``WebSocketClosed`` once a Close was sent or the WebSocket closed.
    func send(_ message: WebSocketMessage) throws(WebSocketClosed) {
        try channel.send(message, into: &output)
        flush()
    }

    /// Starts the closing handshake; if no Close comes back by `deadline`, the socket is dropped (1006).
    func close(code: Int, reason: String, deadline: MonotonicInstant) {
        perform(channel.startClose(code: code, reason: reason))
        guard case .closeSent = channel.state, closeTimer == nil else { return }
        closeTimer = loop.schedule(at: deadline) { [weak self] in
            guard let self else { return }
            closeTimer = nil
            perform(channel.closeTimedOut())
        }
    }

    /// Drops the connection without a closing handshake, reported as 1006 (e.g. the owner shuts down).
    func abort() {
        perform(channel.connectionEnded())
        drop()
    }

    private func readAvailable() {
        guard !isDropped else { return }
        let stop = stream.read(into: loop.readBuffer) { chunk in
            perform(channel.received(chunk))
            return !isDropped
        }
        switch stop {
        case .stopped, .drained: break
        case .wants(let wanted): setInterest(EPOLLIN.rawValue | wanted)
        case .end, .failed: ended()
        }
    }

    /// The stream ended or broke: a WebSocket still open dropped (1006); one already over is done.
    private func ended() {
        output.removeAll()
        written = 0
        perform(channel.connectionEnded())
        drop()
    }

    private func perform(_ actions: [WebSocketChannel.Action]) {
        guard !actions.isEmpty else { return }
        for action in actions {
            switch action {
            case .write(let bytes):
                output.append(contentsOf: bytes)
            case .deliver(let message):
                delegate?.received(message)
            case .closeConnection(let closed):
                dropAfterFlush = true
                if let closeTimer { loop.cancel(closeTimer) }
                closeTimer = nil
                delegate?.closed(closed)
            }
        }
        flush()
    }

    private func flush() {
        guard started, !isDropped else { return }
        switch stream.write(output, from: &written) {
        case .done: break
        case .wouldBlock(let wanted):
            setInterest(EPOLLIN.rawValue | wanted)
            if dropAfterFlush && lingerTimer == nil {
                lingerTimer = loop.schedule(at: MonotonicInstant.now + Self.linger) { [weak self] in self?.drop() }
            }
            return
        case .end, .failed:
            ended()
            return
        }
        // One large message should not pin its buffer for the life of an idle socket.
        if output.capacity > 64 * 1024 { output = [] } else { output.removeAll(keepingCapacity: true) }
        written = 0
        setInterest(EPOLLIN.rawValue)
        if dropAfterFlush { drop() }
    }

    /// Closes the socket (TLS says goodbye first) and lets go of the delegate.
    private func drop() {
        guard !isDropped else { return }
        isDropped = true
        for timer in [closeTimer, lingerTimer].compactMap({ $0 }) { loop.cancel(timer) }
        stream.shutdown()
        loop.close(stream.fd)
        output = []
        delegate = nil
    }

    /// Changes what epoll reports only when it changes.
    private func setInterest(_ events: UInt32) {
        guard events != interest, !isDropped else { return }
        interest = events
        loop.modify(stream.fd, events: events)
    }
}
