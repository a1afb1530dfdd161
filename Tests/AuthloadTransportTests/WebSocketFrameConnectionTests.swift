import AuthloadCore
import AuthloadWire
import CSystem
import Testing

@testable import AuthloadTransport

/// An open WebSocket's shell (the client end) on an embedded loop over a scripted stream: frames that arrive in
/// pieces, a ping answered, the closing handshake and its timers. No socket, no sleep.
@Suite("WebSocket frame connection on an embedded loop")
struct WebSocketFrameConnectionTests {
    /// What the connection told its delegate.
    final class Recorder: WebSocketFrameConnectionDelegate {
        private(set) var messages: [WebSocketMessage] = []
        private(set) var closings: [WebSocketClosed] = []

        func received(_ message: WebSocketMessage) { messages.append(message) }
        func closed(_ closed: WebSocketClosed) { closings.append(closed) }
    }

    /// A client WebSocket over a registered, started core, as it is once an upgrade was accepted.
    final class Harness {
        let loop = EmbeddedLoop()
        let stream = ScriptedStream()
        let recorder = Recorder()
        let frames: WebSocketFrameConnection

        init() {
            let core = ConnectionCore(loop: loop, stream: stream, interest: EPOLLIN.rawValue)
            frames = WebSocketFrameConnection(core: core, role: .client)
            frames.delegate = recorder
            try? core.register(handler: frames)
            frames.start()
        }

        var fd: Int32 { stream.fd }

        /// `bytes` arrive and are read in one round.
        func arrive(_ bytes: [UInt8]) {
            stream.feed(bytes)
            loop.fireReadable(fd)
        }

        /// The frames written so far, as the server would read them (masked, as a client must send them).
        func writtenFrames() throws -> [WebSocketFrame] {
            var decoder = WebSocketFrameDecoder(role: .server)
            decoder.feed(stream.written)
            var frames: [WebSocketFrame] = []
            while case .frame(let frame) = try decoder.next() { frames.append(frame) }
            return frames
        }
    }

    /// A frame as a server sends it: unmasked.
    static func server(_ frame: WebSocketFrame) -> [UInt8] { WebSocketFrameEncoder.encode(frame, maskKey: nil) }

    @Test("frames that arrive in pieces are delivered once whole, in order, however the bytes were cut")
    func framesInPieces() throws {
        let harness = Harness()
        let bytes =
            Self.server(.text("hello"))
            + Self.server(WebSocketFrame(fin: false, opcode: .binary, payload: [1, 2]))
            + Self.server(WebSocketFrame(opcode: .continuation, payload: [3]))
        harness.arrive(Array(bytes[..<1]))
        harness.arrive(Array(bytes[1..<4]))
        #expect(harness.recorder.messages.isEmpty, "half a frame is not a message")
        harness.arrive(Array(bytes[4..<9]))
        #expect(harness.recorder.messages == [.text("hello")])
        harness.arrive(Array(bytes[9..<12]))
        #expect(harness.recorder.messages == [.text("hello")], "a fragment is not a message")
        harness.arrive(Array(bytes[12...]))
        #expect(harness.recorder.messages == [.text("hello"), .binary([1, 2, 3])])
        #expect(!harness.loop.isClosed(harness.fd))
    }

    @Test("a large message read in pieces leaves no buffer behind once delivered: a held socket keeps only unread bytes")
    func readBuffersReleased() throws {
        let harness = Harness()
        let large = Array(repeating: UInt8(9), count: 200_000)
        let bytes = Self.server(.binary(large)) + Self.server(.text("s"))
        harness.arrive(Array(bytes[..<150_000]))
        #expect(harness.recorder.messages.isEmpty)
        #expect(harness.frames.retainedBufferCapacity >= 150_000 - 10, "the unfinished frame's bytes are kept")
        // The rest of the large frame and the first byte of the next.
        harness.arrive(Array(bytes[150_000..<(bytes.count - 2)]))
        #expect(harness.recorder.messages == [.binary(large)])
        #expect(harness.frames.retainedBufferCapacity < 1000, "only the next frame's first byte is kept")
        harness.arrive(Array(bytes[(bytes.count - 2)...]))
        #expect(harness.recorder.messages == [.binary(large), .text("s")])
        #expect(harness.frames.retainedBufferCapacity == 0)
    }

    @Test("a write the socket could not take at once is let go of once it is out")
    func writeBufferReleased() throws {
        let harness = Harness()
        harness.stream.writeWindow = 100
        try harness.frames.send(.binary(Array(repeating: 1, count: 5000)))
        #expect(harness.frames.retainedBufferCapacity >= 4900, "what the socket did not take waits")
        harness.stream.writeWindow = nil
        harness.loop.fire(EPOLLOUT.rawValue, on: harness.fd)
        #expect(try harness.writtenFrames().map(\.payload) == [Array(repeating: 1, count: 5000)])
        #expect(harness.frames.retainedBufferCapacity == 0, "nothing is kept for the next write")
    }

    @Test("a ping is answered with a masked pong carrying its bytes, even when the socket takes it in pieces")
    func pingAnswered() throws {
        let harness = Harness()
        harness.stream.writeWindow = 3
        harness.arrive(Self.server(.ping([7, 8, 9])))
        #expect(harness.stream.written.count == 3)
        #expect(harness.loop.interest[harness.fd] == EPOLLIN.rawValue | EPOLLOUT.rawValue, "waits for room for the rest")
        harness.stream.writeWindow = nil
        harness.loop.fireWritable(harness.fd)
        #expect(harness.loop.interest[harness.fd] == EPOLLIN.rawValue)
        let pongs = try harness.writtenFrames()
        #expect(pongs.map(\.opcode) == [.pong])
        #expect(pongs.first?.payload == [7, 8, 9])
        #expect(pongs.first?.maskKey != nil, "a client masks what it sends")
        #expect(harness.recorder.messages.isEmpty, "a ping is not a message")
    }

    @Test("the closing handshake: our Close, the peer's answer, then the socket closes and the delegate hears the code")
    func closeHandshake() throws {
        let harness = Harness()
        harness.frames.close(code: 1000, reason: "done", deadline: harness.loop.now + .seconds(5))
        let sent = try harness.writtenFrames()
        #expect(sent.map(\.opcode) == [.close])
        #expect(try sent.first.map { try WebSocketClosePayload(decoding: $0.payload) } == WebSocketClosePayload(code: 1000, reason: "done"))
        #expect(!harness.loop.isClosed(harness.fd), "waits for the peer's Close")
        #expect(throws: WebSocketClosed.self) { try harness.frames.send(.text("late")) }
        harness.arrive(Self.server(.close(code: 1000)))
        #expect(harness.recorder.closings == [WebSocketClosed(code: 1000)])
        #expect(harness.loop.isClosed(harness.fd))
        #expect(harness.stream.shutdowns == 1, "TLS would say close_notify first")
        #expect(harness.loop.nextTimer == nil, "the close timer is cancelled")
    }

    @Test("a peer that never answers our Close is dropped at the deadline and reported as 1006")
    func closeTimesOut() {
        let harness = Harness()
        harness.frames.close(code: 1000, reason: "", deadline: harness.loop.now + .seconds(5))
        harness.loop.advanceTime(by: .milliseconds(4999))
        #expect(!harness.loop.isClosed(harness.fd))
        harness.loop.advanceTime(by: .milliseconds(1))
        #expect(harness.recorder.closings.map(\.code) == [WebSocketClosed.abnormal])
        #expect(harness.loop.isClosed(harness.fd))
    }

    @Test("the peer's Close is answered; an answer the socket cannot take is given up after the linger")
    func peerClosesAndAnswerLingers() throws {
        let harness = Harness()
        harness.stream.writeWindow = 0
        harness.arrive(Self.server(.close(code: 1001, reason: "going away")))
        #expect(harness.recorder.closings == [WebSocketClosed(code: 1001, reason: "going away")])
        #expect(!harness.loop.isClosed(harness.fd), "the answering Close is still queued")
        harness.loop.advanceTime(by: WebSocketFrameConnection.linger - .milliseconds(1))
        #expect(!harness.loop.isClosed(harness.fd))
        harness.loop.advanceTime(by: .milliseconds(1))
        #expect(harness.loop.isClosed(harness.fd))
        #expect(harness.stream.written.isEmpty)
    }

    @Test("the peer's Close is answered and the socket closes as soon as the answer is out")
    func peerClosesAndAnswerLeaves() throws {
        let harness = Harness()
        harness.stream.writeWindow = 2
        harness.arrive(Self.server(.close(code: 1001)))
        #expect(!harness.loop.isClosed(harness.fd))
        harness.stream.writeWindow = nil
        harness.loop.fireWritable(harness.fd)
        #expect(harness.loop.isClosed(harness.fd))
        let answer = try harness.writtenFrames()
        #expect(answer.map(\.opcode) == [.close])
        #expect(try answer.first.map { try WebSocketClosePayload(decoding: $0.payload).code } == 1001, "the code is echoed")
    }

    @Test("a peer that drops mid-frame ends the WebSocket as 1006, with no message")
    func peerDropsMidFrame() {
        let harness = Harness()
        let frame = Self.server(.text("cut off"))
        harness.arrive(Array(frame[..<4]))
        harness.stream.feedEnd()
        harness.loop.fireReadable(harness.fd)
        #expect(harness.recorder.messages.isEmpty)
        #expect(harness.recorder.closings.map(\.code) == [WebSocketClosed.abnormal])
        #expect(harness.loop.isClosed(harness.fd))
    }

    @Test("a message sent before start waits behind what start writes first")
    func earlyFramesWaitForStart() throws {
        let loop = EmbeddedLoop()
        let stream = ScriptedStream()
        let core = ConnectionCore(loop: loop, stream: stream, interest: EPOLLIN.rawValue)
        let frames = WebSocketFrameConnection(core: core, role: .server)
        try core.register(handler: frames)
        try frames.send(.text("first frame"))
        #expect(stream.written.isEmpty)
        frames.start(prefix: Array("HTTP/1.1 101 Switching Protocols\r\n\r\n".utf8))
        let text = String(decoding: stream.written, as: UTF8.self)
        #expect(text.hasPrefix("HTTP/1.1 101 Switching Protocols\r\n\r\n"))
        #expect(text.hasSuffix("first frame"), "a server's frames go unmasked")
        frames.abort()
    }

    /// Opens a WebSocket on a client connection as `WebSocketClientConnection` does, recording what it was told.
    final class Opening: ConnectionUpgrade, @unchecked Sendable {
        let recorder = Recorder()
        private(set) var response: HTTPResponse?
        private(set) var failure: (any Error)?
        private(set) var frames: WebSocketFrameConnection?

        func upgraded(_ response: HTTPResponse, leftover: [UInt8], on connection: HTTPClientConnection) -> (any EventHandler)? {
            self.response = response
            guard response.status == 101 else { return nil }
            let frames = WebSocketFrameConnection(core: connection.core, role: .client)
            frames.delegate = recorder
            frames.start(leftover: leftover)
            self.frames = frames
            return frames
        }

        func failed(_ error: any Error) { failure = error }
    }

    static let switching = "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n"

    /// Sends an upgrade request on a new connection, which then connects.
    static func opening(_ harness: ClientConnectionTests.Harness, timeout: Duration = .seconds(10)) -> Opening {
        let opening = Opening()
        let start = harness.loop.now
        harness.connection.send(
            PendingRequest(upgrade: Array("GET /chat HTTP/1.1\r\nHost: example.test\r\n\r\n".utf8), for: opening), method: "GET",
            start: start, deadline: start + timeout, connectDeadline: start + timeout, upgrade: true)
        harness.connect()
        return opening
    }

    @Test("a 101 hands the socket to the frames: frames in the same read as the 101 and every later event reach them")
    func upgradeHandsOver() throws {
        let harness = ClientConnectionTests.Harness()
        let opening = Self.opening(harness)
        harness.stream.feed(Array(Self.switching.utf8) + Self.server(.text("first")))
        harness.loop.fireReadable(harness.fd)
        #expect(opening.response?.status == 101)
        #expect(opening.recorder.messages == [.text("first")], "bytes behind the 101 are frames")
        #expect(harness.loop.nextTimer == nil, "the request timer went with HTTP")
        harness.stream.feed(Self.server(.text("second")))
        harness.loop.fireReadable(harness.fd)
        #expect(opening.recorder.messages == [.text("first"), .text("second")], "the connection forwards its events")
        #expect(!harness.loop.isClosed(harness.fd))
        #expect(harness.closes == 0, "handed over, not closed")
        opening.frames?.abort()
        #expect(harness.loop.isClosed(harness.fd))
        #expect(opening.recorder.closings.map(\.code) == [WebSocketClosed.abnormal])
    }

    @Test("an upgrade the server refuses closes the connection; one it never answers fails with a timeout")
    func upgradeRefusedOrUnanswered() throws {
        let refused = ClientConnectionTests.Harness()
        let opening = Self.opening(refused)
        refused.arrive("HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n", at: 0.1)
        #expect(opening.response?.status == 403)
        #expect(refused.loop.isClosed(refused.fd))
        #expect(refused.closes == 1)

        let unanswered = ClientConnectionTests.Harness()
        let waiting = Self.opening(unanswered, timeout: .seconds(3))
        unanswered.loop.advanceTime(by: .seconds(3))
        #expect((waiting.failure as? TransportError)?.kind == .timeout)
        #expect(waiting.response == nil)
        #expect(unanswered.loop.isClosed(unanswered.fd))
    }
}
