import AuthloadCore
import AuthloadTransport
import AuthloadWire
import Foundation
import Testing

/// A WebSocket service for transport tests: echoes every message, and obeys a few text commands.
///
/// `/forbidden` is refused with 403, `/greet` sends "welcome" from inside `upgrade`, and `v12.stomp`
/// is selected when offered. What the sessions report (`closed 1000`, …) is kept in ``events``.
final class EchoWebSocketService: HTTPService, WebSocketService {
    let events = EventLog()
    /// The peer of the latest accepted session, for pushing to it from outside the loop.
    let lastPeer = Locked<(any WebSocketPeer)?>(nil)

    func respond(to request: HTTPRequest) -> ServiceReply {
        ServiceReply(HTTPResponse(status: 200, body: Array("plain \(request.path)".utf8)))
    }

    func upgrade(_ request: HTTPRequest, offeredProtocols: [String], peer: any WebSocketPeer) -> WebSocketUpgrade {
        switch request.path {
        case "/forbidden":
            return .reject(HTTPResponse(status: 403, body: Array("no entry".utf8)))
        case "/greet":
            peer.send(.text("welcome"))
        default:
            break
        }
        lastPeer.withLock { $0 = peer }
        return .accept(
            handler: EchoHandler(peer: peer, events: events),
            subprotocol: offeredProtocols.contains("v12.stomp") ? "v12.stomp" : nil)
    }
}

/// Lines that sessions report, and a way to wait for one.
final class EventLog: Sendable {
    private let state = Locked((lines: [String](), waiters: [(String, AsyncFlag)]()))

    var lines: [String] { state.withLock { $0.lines } }

    func record(_ line: String) {
        let ready = state.withLock { state in
            state.lines.append(line)
            return state.waiters.filter { $0.0 == line }.map(\.1)
        }
        for flag in ready { flag.set() }
    }

    /// Returns once `line` has been recorded (the suite's time limit bounds the wait).
    func waitFor(_ line: String) async {
        let flag = AsyncFlag()
        let seen = state.withLock { state in
            if state.lines.contains(line) { return true }
            state.waiters.append((line, flag))
            return false
        }
        if !seen { await flag.wait() }
    }
}

private struct EchoHandler: WebSocketSessionHandler {
    let peer: any WebSocketPeer
    let events: EventLog

    func received(_ message: WebSocketMessage) {
        switch message {
        case .text("close 1011"):
            peer.send(.text("bye"))
            peer.close(code: 1011, reason: "boom")
        case .text("later"):
            let peer = self.peer
            peer.schedule(after: .milliseconds(50)) { peer.send(.text("tick")) }
        case .text(let text) where text.hasPrefix("fragments?"):
            // Reports what arrived, so a peer can check that its fragments were joined.
            peer.send(.text("joined \(text.count)"))
        default:
            peer.send(message)
        }
    }

    func closed(code: Int) {
        events.record("closed \(code)")
    }
}

/// A server on two loops with ``EchoWebSocketService`` behind it, and a client for it.
struct WebSocketFixture {
    let group: EventLoopGroup
    let server: HTTPServer
    let service: EchoWebSocketService
    let client: any HTTPClient

    var port: Int { server.port }

    static func with(_ body: (WebSocketFixture) async throws -> Void) async throws {
        let group = try EventLoopGroup(loops: 2)
        defer { group.shutdown() }
        let service = EchoWebSocketService()
        let server = try HTTPServer(group: group, port: 0, service: service)
        defer { server.close() }
        let client = SocketTransport(group: group).makeClient(for: Endpoint(host: "127.0.0.1", port: server.port))
        defer { client.shutdown() }
        try await body(WebSocketFixture(group: group, server: server, service: service, client: client))
    }

    func open(_ path: String = "/echo", protocols: [String] = []) async throws -> any WebSocketConnection {
        try await client.openWebSocket(HTTPRequest(method: "GET", target: path), protocols: protocols, timeout: .seconds(5))
    }
}

/// Runs blocking socket calls on a Dispatch thread, away from the tasks' cooperative pool.
func offPool<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        DispatchQueue.global().async { continuation.resume(with: Result { try work() }) }
    }
}

struct RawSocketError: Error, CustomStringConvertible {
    var description: String
}

/// A blocking TCP socket on loopback for writing exactly the bytes a test needs, bad ones included.
/// Every read gives up after five seconds, so a test cannot hang on it.
final class RawSocket: Sendable {
    let fd: Int32

    init(fd: Int32) {
        self.fd = fd
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    static func connect(port: Int) throws -> RawSocket {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = loopback(port: port)
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard result == 0 else {
            let code = errno
            Glibc.close(fd)
            throw RawSocketError(description: "connect to port \(port) failed: errno \(code)")
        }
        return RawSocket(fd: fd)
    }

    func write(_ bytes: [UInt8]) {
        var sent = 0
        while sent < bytes.count {
            let count = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + sent, bytes.count - sent, Int32(MSG_NOSIGNAL)) }
            if count <= 0 { return }
            sent += count
        }
    }

    /// Reads until `done` says the bytes so far are enough, the peer closes, or five seconds pass.
    func read(until done: ([UInt8]) -> Bool = { _ in false }) -> [UInt8] {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while !done(bytes) {
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count <= 0 { break }
            bytes += chunk[0..<count]
        }
        return bytes
    }

    /// Reads an HTTP head (through the blank line) and returns it with any bytes that came after it.
    func readHead() -> (head: String, rest: [UInt8]) {
        let terminator: [UInt8] = Array("\r\n\r\n".utf8)
        let bytes = read { $0.firstRange(of: terminator) != nil }
        guard let end = bytes.firstRange(of: terminator)?.upperBound else { return (String(decoding: bytes, as: UTF8.self), []) }
        return (String(decoding: bytes[..<end], as: UTF8.self), Array(bytes[end...]))
    }

    func close() { Glibc.close(fd) }

    static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return address
    }
}

/// A blocking listener on 127.0.0.1 that plays a misbehaving WebSocket server for one connection.
final class RawListener: Sendable {
    let fd: Int32
    let port: Int

    /// - Parameter backlog: how many connections the kernel completes before one is accepted; with 0 it completes
    ///   one, and drops the SYNs of later ones until that one is accepted.
    init(backlog: Int32 = 8) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.fd = fd
        var address = RawSocket.loopback(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(fd, backlog) == 0 else { throw RawSocketError(description: "cannot listen: errno \(errno)") }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { _ = getsockname(fd, $0, &length) }
        }
        port = Int(UInt16(bigEndian: address.sin_port))
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    /// Accepts one client, reads its upgrade request, and answers with `respond(request)`.
    func serveOne(_ respond: @escaping @Sendable (HTTPRequest) -> [UInt8], then: @escaping @Sendable (RawSocket) -> Void) async throws {
        try await offPool { [fd] in
            let client = accept(fd, nil, nil)
            guard client >= 0 else { throw RawSocketError(description: "no client connected within 5 s") }
            let socket = RawSocket(fd: client)
            var parser = HTTPRequestParser()
            parser.feed(Array(socket.readHead().head.utf8))
            guard case .request(let request, _) = try parser.next() else {
                throw RawSocketError(description: "the client sent no complete upgrade request")
            }
            socket.write(respond(request))
            then(socket)
        }
    }

    func close() { Glibc.close(fd) }

    /// The 101 a correct server would send for `request`, with `frames` right behind it.
    static func switching(_ request: HTTPRequest, frames: [WebSocketFrame] = []) -> [UInt8] {
        var bytes: [UInt8] = []
        if case .success(let response) = WebSocketHandshake.accept(request: request) {
            response.serialize(into: &bytes, keepAlive: true)
        }
        for frame in frames { WebSocketFrameEncoder.encode(frame, maskKey: nil, into: &bytes) }
        return bytes
    }
}
