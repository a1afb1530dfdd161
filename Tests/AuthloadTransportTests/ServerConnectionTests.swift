import AuthloadCore
import AuthloadWire
import CSystem
import Testing

@testable import AuthloadTransport

/// The HTTP server's connection shell on an embedded loop over a scripted stream: requests that arrive in
/// pieces and pipelined, answers held for their latency on the loop's timers, a client that goes away. No
/// socket, no sleep.
@Suite("Server connection on an embedded loop")
struct ServerConnectionTests {
    /// Answers every request with its target as the body, after the latency its path asks for
    /// (`/slow/<milliseconds>`), and remembers what it was asked.
    final class EchoService: HTTPService {
        let asked = Locked<[String]>([])

        func respond(to request: HTTPRequest) -> ServiceReply {
            asked.withLock { $0.append(request.target) }
            let latency = request.target.split(separator: "/").last.flatMap { Int($0) }.map { Duration.milliseconds($0) } ?? .zero
            return ServiceReply(HTTPResponse(status: 200, body: Array(request.target.utf8)), after: latency)
        }
    }

    final class Harness {
        let loop = EmbeddedLoop()
        let stream = ScriptedStream()
        let service = EchoService()
        let connection: ServerConnection

        init() {
            connection = ServerConnection(stream: stream, loop: loop, service: service)
            connection.start()
        }

        var fd: Int32 { stream.fd }
        var asked: [String] { service.asked.withLock { $0 } }

        func arrive(_ text: String) {
            stream.feed(text)
            loop.fireReadable(fd)
        }
    }

    static func get(_ target: String, close: Bool = false) -> String {
        "GET \(target) HTTP/1.1\r\nHost: example.test\r\n\(close ? "Connection: close\r\n" : "")\r\n"
    }

    /// The bodies of the responses in `text`, in order, each checked to be a 200.
    static func bodies(_ text: String) -> [String] {
        text.components(separatedBy: "HTTP/1.1 ").dropFirst().map { response in
            #expect(response.hasPrefix("200 OK\r\n"))
            return response.components(separatedBy: "\r\n\r\n").last ?? ""
        }
    }

    @Test("pipelined requests split across reads are each served once whole, and answered in order")
    func pipelinedAcrossReads() {
        let harness = Harness()
        #expect(harness.loop.interest[harness.fd] == EPOLLIN.rawValue)
        let both = Self.get("/a") + Self.get("/b")
        let cut = both.index(both.startIndex, offsetBy: Self.get("/a").count + 7)
        harness.arrive(String(both[..<cut]))
        #expect(harness.asked == ["/a"], "the second request is not whole yet")
        #expect(Self.bodies(harness.stream.takeWritten()) == ["/a"])
        harness.arrive(String(both[cut...]))
        #expect(harness.asked == ["/a", "/b"])
        #expect(Self.bodies(harness.stream.takeWritten()) == ["/b"])
        #expect(!harness.loop.isClosed(harness.fd), "kept alive")
    }

    @Test("a pipelined request waits for the answer before it, held on a loop timer for its latency")
    func pipelinedBehindSlowAnswer() {
        let harness = Harness()
        harness.arrive(Self.get("/slow/50") + Self.get("/fast"))
        #expect(harness.asked == ["/slow/50"], "one request at a time")
        #expect(harness.stream.written.isEmpty)
        harness.loop.advanceTime(by: .milliseconds(49))
        #expect(harness.stream.written.isEmpty)
        harness.loop.advanceTime(by: .milliseconds(1))
        #expect(harness.asked == ["/slow/50", "/fast"])
        #expect(Self.bodies(harness.stream.takeWritten()) == ["/slow/50", "/fast"])
    }

    @Test("a client that closes mid-request is closed without being served")
    func clientClosesMidRequest() {
        let harness = Harness()
        harness.arrive("GET /a HTTP/1.1\r\nHo")
        harness.stream.feedEnd()
        harness.loop.fireReadable(harness.fd)
        #expect(harness.asked.isEmpty)
        #expect(harness.stream.written.isEmpty)
        #expect(harness.loop.isClosed(harness.fd))
    }

    @Test("a client that closes while its answer is held closes the connection; the answer is dropped when due")
    func clientClosesWhileAnswerHeld() {
        let harness = Harness()
        harness.arrive(Self.get("/slow/20"))
        harness.stream.feedEnd()
        harness.loop.fireReadable(harness.fd)
        #expect(harness.loop.isClosed(harness.fd))
        harness.loop.advanceTime(by: .milliseconds(20))
        #expect(harness.stream.written.isEmpty)
    }

    @Test("an answer the socket takes in pieces is written whole, and a Connection: close closes only once it is out")
    func partialWriteThenClose() {
        let harness = Harness()
        harness.stream.writeWindow = 10
        harness.arrive(Self.get("/last", close: true))
        #expect(harness.stream.writeSizes == [10])
        #expect(harness.loop.interest[harness.fd] == EPOLLIN.rawValue | EPOLLOUT.rawValue)
        #expect(!harness.loop.isClosed(harness.fd), "not before the answer is out")
        harness.stream.writeWindow = nil
        harness.loop.fireWritable(harness.fd)
        #expect(harness.loop.isClosed(harness.fd))
        let text = harness.stream.takeWritten()
        #expect(Self.bodies(text) == ["/last"])
        #expect(text.contains("Connection: close") || text.contains("connection: close"))
    }

    @Test("a request the parser refuses is answered with its error status, then the connection closes")
    func refusedRequest() {
        let harness = Harness()
        harness.arrive("NOT HTTP AT ALL\r\n\r\n")
        #expect(harness.asked.isEmpty)
        #expect(harness.stream.takeWritten().hasPrefix("HTTP/1.1 4"))
        #expect(harness.loop.isClosed(harness.fd))
    }

    /// Accepts every WebSocket upgrade with a session that echoes each text message and, after the first, sends
    /// "tick" a second later on the peer's timer.
    final class EchoWebSockets: HTTPService, WebSocketService {
        final class Session: WebSocketSessionHandler {
            let peer: any WebSocketPeer
            let closedWith = Locked<[Int]>([])
            private let ticking = Locked(false)

            init(peer: any WebSocketPeer) { self.peer = peer }

            func received(_ message: WebSocketMessage) {
                peer.send(message)
                let first = ticking.withLock { started in
                    defer { started = true }
                    return !started
                }
                guard first else { return }
                peer.schedule(after: .seconds(1)) { [peer] in peer.send(.text("tick")) }
            }

            func closed(code: Int) { closedWith.withLock { $0.append(code) } }
        }

        let sessions = Locked<[Session]>([])

        func respond(to request: HTTPRequest) -> ServiceReply { ServiceReply(HTTPResponse(status: 404)) }

        func upgrade(_ request: HTTPRequest, offeredProtocols: [String], peer: any WebSocketPeer) -> WebSocketUpgrade {
            let session = Session(peer: peer)
            sessions.withLock { $0.append(session) }
            return .accept(handler: session, subprotocol: nil)
        }
    }

    static let upgrade =
        "GET /ws HTTP/1.1\r\nHost: example.test\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"

    /// A frame as a client sends it: masked.
    static func client(_ frame: WebSocketFrame) -> [UInt8] { WebSocketFrameEncoder.encode(frame, maskKey: 0x0102_0304) }

    /// The frames in `bytes`, as a client reads them.
    static func frames(in bytes: some Collection<UInt8>) throws -> [WebSocketFrame] {
        var decoder = WebSocketFrameDecoder(role: .client)
        decoder.feed(bytes)
        var frames: [WebSocketFrame] = []
        while case .frame(let frame) = try decoder.next() { frames.append(frame) }
        return frames
    }

    @Test("an upgrade with a frame behind it in the same read: the 101 first, then the session's answers and its timer's")
    func webSocketUpgrade() throws {
        let loop = EmbeddedLoop()
        let stream = ScriptedStream()
        let service = EchoWebSockets()
        let connection = ServerConnection(stream: stream, loop: loop, service: service)
        connection.start()
        stream.feed(Array(Self.upgrade.utf8) + Self.client(.text("hi")))
        loop.fireReadable(stream.fd)
        let head = "HTTP/1.1 101 Switching Protocols\r\n"
        #expect(String(decoding: stream.written.prefix(head.utf8.count), as: UTF8.self) == head)
        #expect(String(decoding: stream.written, as: UTF8.self).contains("s3pPLMBiTxaQ9kYGzzhZRbK+xOo="), "RFC 6455's accept key")
        let split = try #require(Self.endOfHead(stream.written))
        #expect(try Self.frames(in: stream.written[split...]) == [.text("hi")], "the frame behind the upgrade request was the session's")

        loop.advanceTime(by: .milliseconds(999))
        #expect(try Self.frames(in: stream.written[split...]).count == 1)
        loop.advanceTime(by: .milliseconds(1))
        #expect(try Self.frames(in: stream.written[split...]) == [.text("hi"), .text("tick")], "sent on the loop's timer")

        stream.feed(Self.client(.close(code: 1000)))
        loop.fireReadable(stream.fd)
        #expect(try Self.frames(in: stream.written[split...]).last?.opcode == .close, "the Close is answered")
        #expect(loop.isClosed(stream.fd))
        #expect(service.sessions.withLock { $0.map { $0.closedWith.withLock { $0 } } } == [[1000]])
    }

    /// Where the bytes after the first blank line begin.
    static func endOfHead(_ bytes: [UInt8]) -> Int? {
        let blank: [UInt8] = [13, 10, 13, 10]
        guard bytes.count >= 4 else { return nil }
        return (0...(bytes.count - 4)).first { Array(bytes[$0..<$0 + 4]) == blank }.map { $0 + 4 }
    }
}
