import AuthloadCore
import AuthloadWire
import CSystem
import Foundation

/// An HTTP/1.1 server on the event loops, answering every request with an ``HTTPService``.
///
/// The service answers at once and says how long the answer should take; the server holds the
/// response on a loop timer, so injected latency costs no thread and no task.
///
/// ```swift
/// let server = try HTTPServer(group: loops, host: "127.0.0.1", port: 0, service: service)
/// print(server.port)
/// ```
///
/// Given a ``TLSServerContext`` it serves HTTPS instead; a client whose handshake fails is just closed. It speaks
/// HTTP/2 to a client that asks for it: by ALPN over TLS, and with prior knowledge (the client preface first) on a
/// plain connection or a TLS one that named no protocol; WebSocket upgrades stay on HTTP/1.1.
public final class HTTPServer: Sendable {
    /// The port the server listens on (the one the system chose when asked for 0).
    public let port: Int
    public let host: String
    /// The protocols a client can speak to it, as `authload serve` prints them.
    public let acceptedProtocols: String
    private let listener: Listener

    public init(
        group: EventLoopGroup, host: String = "127.0.0.1", port: Int, service: any HTTPService,
        tls: TLSServerContext? = nil
    ) throws(TransportError) {
        guard let address = SocketAddress(numericHost: host, port: port) else {
            throw TransportError(.other, "\(host) is not a numeric IP address to listen on")
        }
        let (fd, port) = try Sockets.listen(on: address)
        self.port = port
        self.host = host
        if let tls {
            acceptedProtocols = tls.offersHTTP2 ? "h2, http/1.1 (ALPN)" : "http/1.1"
        } else {
            acceptedProtocols = "http/1.1, h2c (prior knowledge)"
        }
        self.listener = Listener(fd: fd, group: group, service: service, tls: tls != nil) { fd throws(TransportError) in
            if let tls { try tls.makeStream(fd: fd) } else { PlainStream(fd: fd) }
        }
        let listener = self.listener
        listener.loop.execute { listener.start() }
    }

    /// Stops accepting; open connections end when their loop shuts down.
    public func close() {
        let listener = self.listener
        listener.loop.execute { listener.stop() }
    }
}

/// Accepts connections on one loop and hands each to a loop of the group, round-robin.
///
/// `@unchecked Sendable`: after init, it is used only on `loop`.
private final class Listener: EventHandler, @unchecked Sendable {
    let fd: Int32
    let loop: EventLoop
    let group: EventLoopGroup
    let service: any HTTPService
    /// Wraps an accepted socket, on the loop that will own it.
    let makeStream: @Sendable (Int32) throws(TransportError) -> any ByteStream
    /// Set when a service injects failed TLS handshakes and this server speaks TLS.
    let handshakeFaults: (any ConnectionFaultInjecting)?
    private var open = true

    init(
        fd: Int32, group: EventLoopGroup, service: any HTTPService, tls: Bool,
        makeStream: @escaping @Sendable (Int32) throws(TransportError) -> any ByteStream
    ) {
        self.handshakeFaults = tls ? service as? any ConnectionFaultInjecting : nil
        self.fd = fd
        self.group = group
        self.loop = group.next()
        self.service = service
        self.makeStream = makeStream
    }

    func start() {
        do throws(IOError) {
            try loop.register(fd, events: EPOLLIN.rawValue, handler: self)
        } catch {
            // Once, at the start: a server that cannot watch its listening socket would only leave its clients to time
            // out, each blaming the target.
            fatalError("the server cannot accept connections: \(error)")
        }
    }

    func stop() {
        guard open else { return }
        open = false
        loop.close(fd)
    }

    func handleEvents(_ events: UInt32) {
        while open {
            let client: Int32
            do throws(IOError) {
                guard case .processed(let accepted) = try syscall(blocking: true, where: "accept4", { authload_accept_nonblocking(fd) })
                else { return }
                client = accepted
            } catch {
                // EMFILE: leave the connection in the backlog; the next readiness retries.
                return
            }
            if handshakeFaults?.connectionFault() == .tlsHandshake {
                // The handshake fails: the connection closes before the server says a word of TLS.
                SystemCalls.close(client)
                continue
            }
            do throws(IOError) {
                try SystemCalls.setOption(client, Int32(IPPROTO_TCP), TCP_NODELAY, 1, "setsockopt(TCP_NODELAY)")
            } catch {
                // Served with Nagle on, every answer would wait for the client's delayed ACK: a staging server's latency
                // that no real one has. Closed instead, as a connection the server could not take.
                SystemCalls.close(client)
                continue
            }
            let target = group.next()
            let service = self.service
            let makeStream = self.makeStream
            let adopt: @Sendable () -> Void = {
                guard let stream = try? makeStream(client) else {
                    SystemCalls.close(client)
                    return
                }
                let connection = ServerConnection(stream: stream, loop: target, service: service)
                connection.start()
            }
            if target === loop { adopt() } else { target.execute(adopt) }
        }
    }
}

/// One accepted connection: secures itself when its stream does TLS, then serves what its
/// ``HTTPServerConnectionState`` says is next, asking the service and writing the answers in order; a connection
/// that speaks HTTP/2 (ALPN `h2`, or the client preface first) is handed to an ``HTTP2ServerSession``.
final class ServerConnection: EventHandler {
    let core: ConnectionCore
    let loop: any ConnectionLoop
    let service: any HTTPService
    private var handshaking = true
    private var state = HTTPServerConnectionState(detectsHTTP2: true)
    /// Set once a WebSocket upgrade was accepted: the socket then carries frames, not HTTP.
    private var webSocket: WebSocketFrameConnection?
    /// Set once the connection turned out to speak HTTP/2.
    private var http2: HTTP2ServerSession?

    private var closed: Bool { core.isClosed }

    init(stream: any ByteStream, loop: any ConnectionLoop, service: any HTTPService) {
        self.core = ConnectionCore(loop: loop, stream: stream, interest: EPOLLIN.rawValue)
        self.loop = loop
        self.service = service
    }

    /// Registers the socket with the loop and begins the stream's handshake (a no-op for plain TCP).
    func start() {
        do {
            try core.register(handler: self)
        } catch {
            close()
            return
        }
        continueHandshake()
    }

    private func continueHandshake() {
        switch core.handshake() {
        case .done:
            handshaking = false
            if (core.stream as? TLSStream)?.negotiatedProtocol == "h2" { startHTTP2(leftover: []) }
        case .pending: break
        case .failed: close()
        }
    }

    func handleEvents(_ events: UInt32) {
        if handshaking {
            continueHandshake()
            if handshaking { return }
        }
        if let webSocket {
            webSocket.handleEvents(events)
            return
        }
        if let http2 {
            http2.handleEvents(events)
            return
        }
        if events & EPOLLOUT.rawValue != 0 { written(core.flush()) }
        if events & (EPOLLIN.rawValue | EPOLLHUP.rawValue | EPOLLERR.rawValue) != 0 { readAvailable() }
    }

    private func readAvailable() {
        guard !closed && webSocket == nil && http2 == nil else { return }
        let end = core.read { chunk in
            state.received(chunk)
            serveParsed()
            return !closed && webSocket == nil && http2 == nil
        }
        switch end {
        case .paused: break
        case .end, .failed: close()
        }
    }

    private func serveParsed() {
        while !closed && webSocket == nil && http2 == nil {
            switch state.next() {
            case .wait:
                return
            case .http2(let bytes):
                startHTTP2(leftover: bytes)
                return
            case .refuse(let bytes):
                enqueue(bytes)
                return
            case .upgrade(let request):
                upgrade(request)
                return
            case .serve(let request):
                // Held on a loop timer for its latency: the state serves nothing else until it is given.
                let reply = service.respond(to: request)
                if reply.latency <= .zero {
                    deliver(reply)
                } else {
                    _ = loop.schedule(at: loop.now + reply.latency) { [weak self] in self?.deliver(reply) }
                }
            }
        }
    }

    private func startHTTP2(leftover: [UInt8]) {
        let session = HTTP2ServerSession(core: core, loop: loop, service: service)
        http2 = session
        session.start(leftover: leftover)
    }

    /// Answers a WebSocket upgrade: the rejection (then close), or the 101 and a switch to frames.
    private func upgrade(_ request: HTTPRequest) {
        let frames = WebSocketFrameConnection(core: core, role: .server)
        switch WebSocketServerHandshake.negotiate(request, service: service, frames: frames) {
        case .reject(let response):
            var bytes: [UInt8] = []
            response.serialize(into: &bytes, keepAlive: false)
            state.closeAfterWriting()
            enqueue(bytes)
        case .accept(let response):
            // Behind whatever HTTP output is still queued in the core: the 101, then the frames.
            var bytes: [UInt8] = []
            response.serialize(into: &bytes, keepAlive: true)
            webSocket = frames
            frames.start(prefix: bytes, leftover: state.takeLeftover())
        }
    }

    private func deliver(_ reply: ServiceReply) {
        guard !closed else { return }
        if let fault = reply.fault, case .success(let response) = reply.result {
            return inject(fault, into: response)
        }
        switch reply.result {
        case .success(let response):
            enqueue(state.answer(response))
            serveParsed()
        case .failure:
            resetAndClose()
        }
    }

    /// Breaks the answer on the wire (fault injection); the connection serves nothing after it.
    private func inject(_ fault: WireFault, into response: HTTPResponse) {
        switch fault.serverAction(for: response) {
        case .reset:
            resetAndClose()
        case .silent:
            break // The request stays served: nothing more is answered until the client gives up.
        case .writeAndClose(let bytes):
            state.closeAfterWriting()
            enqueue(bytes)
        case .trickle(let bytes):
            trickle(bytes[...])
        }
    }

    /// Writes one byte a second until the response is out or the client has gone.
    private func trickle(_ bytes: ArraySlice<UInt8>) {
        guard !closed, let first = bytes.first else {
            if !closed { close() }
            return
        }
        enqueue([first])
        _ = loop.schedule(at: loop.now + .seconds(1)) { [weak self] in self?.trickle(bytes.dropFirst()) }
    }

    private func enqueue(_ bytes: [UInt8]) { written(core.send(bytes)) }

    /// Closes once the last answer is out; a socket that failed closes at once.
    private func written(_ progress: ConnectionCore.Progress) {
        switch progress {
        case .done: if state.closing { close() }
        case .pending: break
        case .failed: close()
        }
    }

    /// Closes with RST instead of FIN, as a crashed or reset peer would: without a TLS close_notify first, or
    /// the client would read a clean end before the reset.
    private func resetAndClose() { core.close(reset: true, graceful: false) }

    private func close() { core.close() }
}
