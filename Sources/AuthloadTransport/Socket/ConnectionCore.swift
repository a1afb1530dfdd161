import AuthloadCore
import CSystem
import Foundation

/// What every connection on a loop shares, whatever it speaks: the socket and its stream (plain or TLS),
/// what epoll reports for it, the bytes queued for it, the read loop, the handshake step and the close.
///
/// The HTTP client (``HTTPClientConnection``), the HTTP server's connection and the WebSocket frames
/// (``WebSocketFrameConnection``) each hold one and decide only what their protocol means; after a
/// WebSocket upgrade the same core passes from the HTTP side to the frames, so what epoll watches and
/// what is still queued go with it. Touched only on its loop's thread.
final class ConnectionCore {
    let loop: any ConnectionLoop
    let stream: any ByteStream
    var fd: Int32 { stream.fd }
    /// What epoll reports for the socket now, or will once it is registered.
    private(set) var interest: UInt32
    /// The socket is in its loop's epoll set (``register(handler:)``).
    private(set) var isRegistered = false
    private(set) var isClosed = false
    /// Bytes not yet taken by the socket, from `written` on.
    private var output: [UInt8] = []
    private var written = 0

    /// - Parameter interest: what epoll is to report for the socket once it is registered.
    init(loop: any ConnectionLoop, stream: any ByteStream, interest: UInt32) {
        self.loop = loop
        self.stream = stream
        self.interest = interest
    }

    /// Adds the socket to its loop's epoll set for ``interest``, with `handler` to hear its events; once.
    ///
    /// - Throws: when the kernel would not watch the socket; the caller fails the connection.
    func register(handler: any EventHandler) throws(TransportError) {
        guard !isRegistered, !isClosed else { return }
        do throws(IOError) {
            try loop.register(fd, events: interest, handler: handler)
        } catch {
            throw TransportError.socket(error, .opening)
        }
        isRegistered = true
    }

    /// Reports the socket's events to `handler` from now on, instead of the connection that registered it (which lets
    /// go of it after an upgrade, and is freed).
    func handOver(to handler: any EventHandler) {
        guard isRegistered, !isClosed else { return }
        loop.handOver(fd, to: handler)
    }

    /// Bytes are queued that the socket has not taken yet.
    var hasOutput: Bool { written < output.count }

    /// Bytes of memory held for output now: none once everything queued is written.
    var retainedOutputCapacity: Int { output.capacity }

    /// What a handshake step or a write came to.
    enum Progress {
        /// Finished (the handshake is done; everything queued is written).
        case done
        /// Waiting for the socket: epoll now reports the readiness it needs.
        case pending
        case failed(TransportError)
    }

    /// Why a non-blocking connect failed, once epoll reported the socket after it; nil when it connected.
    ///
    /// With an error or hang-up reported, the connect's errno is pending on the socket (a getsockopt that fails says
    /// why instead); with none pending the connect did finish, and the first read or write meets whatever came after.
    func connectFailure(events: UInt32) -> IOError? {
        guard events & (EPOLLERR.rawValue | EPOLLHUP.rawValue) != 0 else { return nil }
        do throws(IOError) {
            let code = try SystemCalls.pendingError(fd)
            return code == 0 ? nil : IOError(code, call: "connect")
        } catch {
            return error
        }
    }

    /// Drives the stream's security handshake a step (plain TCP is done at once); once done, epoll reports input.
    func handshake() -> Progress {
        switch stream.handshake() {
        case .done:
            setInterest(EPOLLIN.rawValue)
            return .done
        case .wouldBlock(let wanted):
            setInterest(wanted)
            return .pending
        case .end: return .failed(.closedDuringHandshake)
        case .failed(let error): return .failed(error.duringHandshake())
        }
    }

    /// Queues `bytes` behind whatever is queued and writes as much as the socket takes now.
    ///
    /// With nothing queued, the bytes are written from the caller's array and only what the socket does not
    /// take is copied.
    func send(_ bytes: [UInt8]) -> Progress {
        guard !isClosed else { return .failed(TransportError(.closed)) }
        guard !hasOutput else {
            output.append(contentsOf: bytes)
            return flush()
        }
        var sent = 0
        let result = stream.write(bytes, from: &sent)
        if case .wouldBlock = result {
            output = Array(bytes[sent...])
            written = 0
        }
        return settle(result)
    }

    /// Writes `bytes` on a plain socket whose connect may still be under way, as ``send(_:)`` does once it is up.
    ///
    /// - Returns: nil while the connect is under way, or over TLS, whose handshake comes first: nothing was written or
    ///   queued. A failure is the connect's.
    func sendWhileConnecting(_ bytes: [UInt8]) -> Progress? {
        guard let plain = stream as? PlainStream, !isClosed, !hasOutput else { return nil }
        switch bytes.withUnsafeBytes({ plain.writeWhileConnecting($0) }) {
        case .done(let count) where count == bytes.count: return settle(.done(count))
        // Up, and the socket took part: the rest is written as any other.
        case .done(let count): return send(Array(bytes[count...]))
        case .wouldBlock: return nil
        case .end: return .failed(TransportError(.closed, "the server closed the connection"))
        case .failed(let error): return .failed(error)
        }
    }

    /// Writes what is queued, as far as the socket takes it now (call when epoll reports EPOLLOUT).
    func flush() -> Progress {
        guard !isClosed else { return .failed(TransportError(.closed)) }
        guard hasOutput else { return .done }
        return settle(stream.write(output, from: &written))
    }

    private func settle(_ result: StreamResult) -> Progress {
        switch result {
        case .done:
            // Released, not kept for the next write: a socket queues only what the kernel would not take at once, rare on
            // a held socket, and a kept buffer would cost every held socket its largest blocked write for its whole life.
            output = []
            written = 0
            setInterest(EPOLLIN.rawValue)
            return .done
        case .wouldBlock(let wanted):
            setInterest(EPOLLIN.rawValue | wanted)
            return .pending
        case .end: return .failed(TransportError(.closed, "the server closed the connection"))
        case .failed(let error): return .failed(error)
        }
    }

    /// Forgets what is queued (the peer is gone).
    func discardOutput() {
        output = []
        written = 0
    }

    /// Why ``read(while:)`` stopped.
    enum ReadEnd {
        /// The consumer had enough, or nothing more is there now.
        case paused
        /// The peer ended the stream.
        case end
        case failed(TransportError)
    }

    /// Reads what the socket holds, handing each chunk to `consume` while it returns true: the one read
    /// loop of every connection (``ByteStream/read(into:while:)``), into the loop's shared buffer.
    func read(while consume: (UnsafeRawBufferPointer) -> Bool) -> ReadEnd {
        guard !isClosed else { return .paused }
        switch stream.read(into: loop.readBuffer, while: consume) {
        case .stopped, .drained: return .paused
        case .wants(let wanted):
            // TLS needs the socket writable to go on reading.
            setInterest(EPOLLIN.rawValue | wanted)
            return .paused
        case .end: return .end
        case .failed(let error): return .failed(error)
        }
    }

    /// Changes what epoll reports, only when it changes: most writes leave it as it was. Before the socket is
    /// registered it only changes what it will be registered for.
    func setInterest(_ events: UInt32) {
        guard events != interest, !isClosed else { return }
        interest = events
        if isRegistered { loop.modify(fd, events: events) }
    }

    /// Closes the socket once.
    ///
    /// - Parameters:
    ///   - reset: close with a reset (``Sockets/resetOnClose(_:)``): no TIME_WAIT for an idle client connection,
    ///     or a broken connection the peer should see as one.
    ///   - graceful: say goodbye at the stream level first (TLS `close_notify`); a connection broken on purpose
    ///     skips it, or the peer would read a clean end before the reset.
    func close(reset: Bool = false, graceful: Bool = true) {
        guard !isClosed else { return }
        isClosed = true
        if reset {
            do throws(IOError) {
                try Sockets.resetOnClose(fd)
            } catch {
                // The socket closes with a FIN after all: its port waits in TIME_WAIT, and nothing is lost.
            }
        }
        if graceful { stream.shutdown() }
        loop.close(fd)
        output = []
        written = 0
    }
}
