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
            core.register(handler: frames)
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
        core.register(handler: frames)
        try frames.send(.text("first frame"))
        #expect(stream.written.isEmpty)
        frames.start(prefix: Array("HTTP/1.1 101 Switching Protocols\r\n\r\n".utf8))
        let text = String(decoding: stream.written, as: UTF8.self)
        #expect(text.hasPrefix("HTTP/1.1 101 Switching Protocols\r\n\r\n"))
        #expect(text.hasSuffix("first frame"), "a server's frames go unmasked")
        frames.abort()
    }
}
