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
/// It reads its connection's core into the channel and carries out what the channel answers: queue
/// bytes, hand messages to its delegate, and drop the socket once the channel says the WebSocket is
/// over (after writing what is queued, for at most ``linger``). Touched only on its loop's thread. The
/// owner of the socket's epoll registration (the HTTP connection it was upgraded from) forwards events
/// here with ``handleEvents(_:)``.
final class WebSocketFrameConnection: EventHandler {
    /// How long queued bytes (the final Close) may take to leave once the WebSocket is over.
    static let linger = Duration.seconds(2)

    let loop: any ConnectionLoop
    /// The socket, taken over from the HTTP connection that upgraded.
    let core: ConnectionCore
    /// Strong until the socket is dropped, then released: an open socket keeps its listener alive.
    var delegate: (any WebSocketFrameConnectionDelegate)?
    private var channel: WebSocketChannel
    /// Frames sent before ``start(prefix:leftover:)``: they wait behind the handshake response.
    private var early: [UInt8] = []
    private var started = false
    private var dropAfterFlush = false
    var isDropped: Bool { core.isClosed }
    private var closeTimer: TimerID?
    private var lingerTimer: TimerID?

    init(core: ConnectionCore, role: WebSocketChannel.Role) {
        self.core = core
        self.loop = core.loop
        channel = WebSocketChannel(role: role)
    }

    /// Whether the WebSocket is over (closed, failed or dropped), though its last bytes may still be leaving.
    var isClosed: Bool { channel.isClosed }

    /// Bytes of memory the socket holds for input and output now, beyond its fixed state: between messages, with
    /// nothing queued, none. What the loop reads goes into its own buffer first, and only an unfinished frame is kept.
    var retainedBufferCapacity: Int { channel.retainedInputCapacity + core.retainedOutputCapacity + early.capacity }

    /// Begins I/O: writes `prefix` (the handshake response, on a server) before any frame queued so
    /// far, then takes `leftover`, the bytes that arrived behind the handshake.
    func start(prefix: [UInt8] = [], leftover: [UInt8] = []) {
        started = true
        let queued = prefix + early
        early = []
        written(core.send(queued))
        if !leftover.isEmpty { perform(channel.received(leftover)) }
        // Decrypted input waiting inside a TLS stream is invisible to epoll.
        if core.stream.hasBufferedInput { readAvailable() }
    }

    func handleEvents(_ events: UInt32) {
        if events & EPOLLOUT.rawValue != 0 { written(core.flush()) }
        if events & (EPOLLIN.rawValue | EPOLLHUP.rawValue | EPOLLERR.rawValue) != 0 { readAvailable() }
    }

    /// Queues one message; before ``start(prefix:leftover:)`` it waits behind the handshake response.
    ///
    /// - Throws: ``WebSocketClosed`` once a Close was sent or the WebSocket closed.
    func send(_ message: WebSocketMessage) throws(WebSocketClosed) {
        var bytes: [UInt8] = []
        try channel.send(message, into: &bytes)
        write(bytes)
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
        let end = core.read { chunk in
            perform(channel.received(chunk))
            return !isDropped
        }
        switch end {
        case .paused: break
        case .end, .failed: ended()
        }
    }

    /// The stream ended or broke: a WebSocket still open dropped (1006); one already over is done.
    private func ended() {
        core.discardOutput()
        early = []
        perform(channel.connectionEnded())
        drop()
    }

    private func perform(_ actions: [WebSocketChannel.Action]) {
        guard !actions.isEmpty else { return }
        var bytes: [UInt8] = []
        for action in actions {
            switch action {
            case .write(let frame):
                bytes.append(contentsOf: frame)
            case .deliver(let message):
                delegate?.received(message)
            case .closeConnection(let closed):
                dropAfterFlush = true
                if let closeTimer { loop.cancel(closeTimer) }
                closeTimer = nil
                delegate?.closed(closed)
            }
        }
        write(bytes)
    }

    /// Queues frames (behind the handshake response until started) and writes what the socket takes.
    private func write(_ bytes: [UInt8]) {
        guard started else {
            early.append(contentsOf: bytes)
            return
        }
        written(bytes.isEmpty ? core.flush() : core.send(bytes))
    }

    /// Drops the socket once everything is out after the WebSocket ended, or after ``linger`` at most.
    private func written(_ progress: ConnectionCore.Progress) {
        guard !isDropped else { return }
        switch progress {
        case .done:
            if dropAfterFlush { drop() }
        case .pending:
            if dropAfterFlush && lingerTimer == nil {
                lingerTimer = loop.schedule(at: loop.now + Self.linger) { [weak self] in self?.drop() }
            }
        case .failed:
            ended()
        }
    }

    /// Closes the socket (TLS says goodbye first) and lets go of the delegate.
    private func drop() {
        guard !isDropped else { return }
        for timer in [closeTimer, lingerTimer].compactMap({ $0 }) { loop.cancel(timer) }
        core.close()
        delegate = nil
    }
}
