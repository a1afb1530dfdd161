import AuthloadCore
import AuthloadWire
import CSystem
import Testing

@testable import AuthloadTransport

/// The HTTP/2 client connection's shell on an embedded loop over a scripted stream: what it writes, how it
/// multiplexes, waits for streams and window, and what a refused stream, a GOAWAY or a reset make of a request.
@Suite("HTTP/2 client connection on an embedded loop")
struct HTTP2ClientConnectionTests {
    static let get = HTTPRequest(method: "GET", target: "/login").http2Fields(authority: "example.test", scheme: "http")

    /// A connection, its loop and stream, the server's view of what the client wrote, and what each request got.
    final class Harness {
        let loop = EmbeddedLoop()
        let stream = ScriptedStream()
        let connection: HTTP2ClientConnection
        var results: [Int: Result<HTTPResponse, any Error>] = [:]
        var exchanges: [HTTP2Exchange] = []
        var closes = 0
        var goingAway = 0
        private var reader = HTTP2FrameDecoder(start: .clientPreface)
        private var hpack = HPACKDecoder()
        var encoder = HPACKEncoder()

        init(secure: Bool = false, alpn: String? = nil, fallsBack: Bool = true, idleTimeout: Duration = .seconds(30)) {
            stream.isSecure = secure
            stream.negotiatedProtocol = alpn
            var events = HTTP2ClientConnection.Events()
            connection = HTTP2ClientConnection(
                loop: loop, stream: stream, idleTimeout: idleTimeout, fallsBackToHTTP1: fallsBack, events: events)
            events = HTTP2ClientConnection.Events(
                closed: { [weak self] _ in self?.closes += 1 }, goingAway: { [weak self] _ in self?.goingAway += 1 })
            connection.events = events
            try? connection.register()
        }

        deinit { connection.close() }

        var fd: Int32 { stream.fd }

        /// Hands the connection request number `exchanges.count`, due `timeout` after the loop's now.
        @discardableResult
        func send(_ fields: [HPACKHeader] = HTTP2ClientConnectionTests.get, body: [UInt8] = [], timeout: Duration = .seconds(10)) -> Int {
            let index = exchanges.count
            let start = loop.now
            let exchange = HTTP2Exchange(
                fields: fields, body: body, start: start, deadline: start + timeout, connectDeadline: start + timeout)
            exchange.waiter = .callback { [weak self] result in self?.results[index] = result }
            exchanges.append(exchange)
            connection.send(exchange)
            return index
        }

        /// Frames the client wrote since the last call.
        func written() -> [HTTP2Frame] {
            reader.feed(stream.takeWrittenBytes())
            var frames: [HTTP2Frame] = []
            do throws(HTTP2FrameError) {
                while case .frame(let frame) = try reader.next() { frames.append(frame) }
            } catch {
                Issue.record("the client wrote bytes a server refuses: \(error)")
            }
            return frames
        }

        /// The header list of a HEADERS frame the client wrote.
        func fields(of frame: HTTP2Frame) -> [HPACKHeader]? {
            guard case .headers(_, let fragment, _, _, _, _) = frame else { return nil }
            return try? hpack.decode(fragment)
        }

        /// The server's frames arrive at `seconds` after the loop's origin, read in one round.
        func arrive(_ frames: HTTP2Frame..., at seconds: Double? = nil) {
            if let seconds { loop.advanceTime(to: EmbeddedLoop.at(seconds)) }
            stream.feed(frames.flatMap { HTTP2FrameEncoder.encode($0) })
            loop.fireReadable(fd)
        }

        /// The socket connects, and the server's SETTINGS (with `settings`) and its ACK of ours come in.
        func open(_ settings: [HTTP2Setting] = []) {
            loop.fireWritable(fd)
            arrive(.settings(settings), .settings(ack: true))
        }

        func response(_ status: Int, on id: UInt32, body: String? = nil) -> [HTTP2Frame] {
            let head = HTTP2Frame.headers(
                streamID: id, fragment: encoder.encode([HPACKHeader(":status", "\(status)")]), endStream: body == nil)
            return body.map { [head, .data(streamID: id, data: Array($0.utf8), endStream: true)] } ?? [head]
        }

        func answer(_ status: Int, on id: UInt32, body: String? = nil, at seconds: Double? = nil) {
            if let seconds { loop.advanceTime(to: EmbeddedLoop.at(seconds)) }
            stream.feed(response(status, on: id, body: body).flatMap { HTTP2FrameEncoder.encode($0) })
            loop.fireReadable(fd)
        }

        func error(_ index: Int) -> TransportError? {
            guard case .failure(let error)? = results[index] else { return nil }
            return error as? TransportError
        }

        func response(_ index: Int) -> HTTPResponse? { try? results[index]?.get() }
    }

    @Test("an h2c connection writes the preface, SETTINGS and the request's HEADERS, and reads the response as HTTP/2")
    func plainExchange() throws {
        let harness = Harness()
        harness.send()
        #expect(harness.loop.interest[harness.fd] == EPOLLOUT.rawValue, "nothing is written before the socket connects")
        harness.loop.advanceTime(to: EmbeddedLoop.at(0.01))
        harness.open()
        let frames = harness.written()
        guard case .settings(false, _) = frames.first, case .headers(1, _, true, true, _, _) = frames.dropFirst().first else {
            Issue.record("expected SETTINGS then HEADERS on stream 1: \(frames)")
            return
        }
        #expect(harness.fields(of: frames[1])?.first(where: { $0.name == ":path" })?.value == "/login")
        harness.answer(200, on: 1, body: "{}", at: 0.03)
        let response = try #require(harness.response(0))
        #expect(response.status == 200 && response.body == Array("{}".utf8) && response.version == .http2)
        #expect(response.timing.total == .milliseconds(30))
        #expect(response.timing.connect == .milliseconds(10) && !response.timing.reusedConnection)
        #expect(response.timing.streamWait == .zero)
        #expect(frames.contains(.settings(ack: true)), "the server's SETTINGS are acknowledged")
    }

    @Test("requests beyond the server's SETTINGS_MAX_CONCURRENT_STREAMS wait for a stream, and the wait is timed apart")
    func streamSlots() throws {
        let harness = Harness()
        harness.open([HTTP2Setting(.maxConcurrentStreams, 1)])
        _ = harness.written()
        harness.send()
        harness.send()
        let first = harness.written()
        #expect(first.count == 1 && first.first?.streamID == 1, "one stream at a time: \(first)")
        harness.answer(200, on: 1, at: 0.05)
        #expect(harness.written().first?.streamID == 3, "the second request goes out once the first stream closes")
        harness.answer(204, on: 3, at: 0.08)
        let second = try #require(harness.response(1))
        #expect(second.status == 204)
        #expect(second.timing.streamWait == .milliseconds(50))
        #expect(second.timing.total == .milliseconds(80), "the wait for a stream is part of the latency")
        #expect(second.timing.reusedConnection)
    }

    @Test("many requests share one connection as streams 1, 3, 5, answered in any order")
    func multiplexed() throws {
        let harness = Harness()
        harness.open()
        _ = harness.written()
        for _ in 0..<3 { harness.send() }
        #expect(harness.written().map(\.streamID) == [1, 3, 5])
        harness.answer(201, on: 5, at: 0.01)
        harness.answer(202, on: 1, at: 0.02)
        harness.answer(203, on: 3, at: 0.03)
        #expect((0..<3).map { harness.response($0)?.status } == [202, 203, 201])
        #expect(harness.closes == 0)
    }

    @Test("REFUSED_STREAM fails the request as unprocessed, to be sent again; another code names itself in the detail")
    func resets() {
        let harness = Harness()
        harness.open()
        harness.send()
        harness.send()
        harness.arrive(.rstStream(streamID: 1, .refusedStream), .rstStream(streamID: 3, .protocolError))
        #expect(harness.error(0)?.isUnprocessedByServer == true)
        #expect(harness.error(1)?.isUnprocessedByServer == false)
        #expect(harness.error(1)?.detail == "h2 stream error PROTOCOL_ERROR")
        #expect(Outcome(harness.error(1)!).detail == "h2 stream error PROTOCOL_ERROR")
    }

    @Test("after GOAWAY streams above its last go back unprocessed, those below finish, then the connection closes")
    func goAway() throws {
        let harness = Harness()
        harness.open()
        harness.send()
        harness.send()
        harness.arrive(.goAway(lastStreamID: 1, .noError))
        #expect(harness.goingAway == 1 && !harness.connection.takesRequests)
        #expect(harness.error(1)?.isUnprocessedByServer == true)
        harness.send()
        #expect(harness.error(2)?.isUnprocessedByServer == true, "no new stream after GOAWAY")
        #expect(harness.closes == 0, "stream 1 is still being answered")
        harness.answer(200, on: 1)
        #expect(harness.response(0)?.status == 200)
        #expect(harness.closes == 1 && harness.loop.isClosed(harness.fd))
    }

    @Test("a GOAWAY with an error code and then the end of the stream fail the streams it took with the code's name")
    func goAwayWithError() {
        let harness = Harness()
        harness.open()
        harness.send()
        harness.arrive(.goAway(lastStreamID: 1, .enhanceYourCalm))
        harness.stream.feedEnd()
        harness.loop.fireReadable(harness.fd)
        #expect(harness.error(0)?.detail == "h2 GOAWAY ENHANCE_YOUR_CALM")
        #expect(harness.error(0)?.isUnprocessedByServer == false)
    }

    @Test("a frame that breaks the protocol ends the connection with GOAWAY and fails its requests naming the code")
    func connectionError() {
        let harness = Harness()
        harness.open()
        _ = harness.written()
        harness.send()
        // DATA on a stream the client never opened.
        harness.arrive(.data(streamID: 7, data: [1]))
        #expect(harness.written().contains { if case .goAway(_, .protocolError, _) = $0 { true } else { false } })
        #expect(harness.error(0)?.detail == "h2 connection error PROTOCOL_ERROR")
        #expect(harness.loop.isClosed(harness.fd))
    }

    @Test("a request past its deadline fails as timed out and its stream is reset with CANCEL; the others go on")
    func timeout() {
        let harness = Harness()
        harness.open()
        _ = harness.written()
        harness.send(timeout: .seconds(1))
        harness.send(timeout: .seconds(5))
        _ = harness.written()
        harness.loop.advanceTime(by: .seconds(2))
        #expect(harness.error(0)?.reason == .timedOut(.awaitingResponse))
        #expect(harness.written() == [.rstStream(streamID: 1, .cancel)])
        harness.answer(200, on: 3)
        #expect(harness.response(1)?.status == 200)
    }

    @Test("a body the server's window holds back goes out as the window opens, and that wait is timed apart")
    func windowWait() throws {
        let harness = Harness()
        harness.open([HTTP2Setting(.initialWindowSize, 4)])
        _ = harness.written()
        let post = HTTPRequest(method: "POST", target: "/login").http2Fields(authority: "example.test", scheme: "http")
        harness.send(post, body: Array("user=alice".utf8))
        let first = harness.written()
        #expect(first.contains(.data(streamID: 1, data: Array("user".utf8), endStream: false)))
        harness.arrive(.windowUpdate(streamID: 1, increment: 100), at: 0.02)
        #expect(harness.written() == [.data(streamID: 1, data: Array("=alice".utf8), endStream: true)])
        harness.answer(200, on: 1, at: 0.05)
        let response = try #require(harness.response(0))
        #expect(response.timing.streamWait == .milliseconds(20))
    }

    @Test("over TLS, a server that chooses http/1.1 by ALPN sends the requests back for HTTP/1.1 under auto, and fails them under 2")
    func alpn() {
        let auto = Harness(secure: true, alpn: "http/1.1", fallsBack: true)
        auto.send()
        auto.loop.fireWritable(auto.fd)
        guard case .failure(let error)? = auto.results[0] else {
            Issue.record("no answer")
            return
        }
        #expect(error is HTTP2Detour)
        #expect(auto.stream.takeWrittenBytes().isEmpty, "no HTTP/2 byte goes to an HTTP/1.1 server")

        let required = Harness(secure: true, alpn: nil, fallsBack: false)
        required.send()
        required.loop.fireWritable(required.fd)
        #expect(required.error(0)?.reason == .http2NotNegotiated)
        #expect(required.error(0)?.detail == "HTTP/2 required, and the server chose no protocol by ALPN")

        let agreed = Harness(secure: true, alpn: "h2", fallsBack: false)
        agreed.send()
        agreed.loop.fireWritable(agreed.fd)
        #expect(agreed.written().contains { $0.type == 0x1 }, "h2 agreed: the request goes out")
    }

    @Test("a cancelled request resets its stream with CANCEL and fails as cancelled; the connection carries the others on")
    func cancelled() {
        let harness = Harness()
        harness.open()
        _ = harness.written()
        harness.send()
        harness.send()
        _ = harness.written()
        harness.connection.cancel(harness.exchanges[0])
        #expect(harness.written() == [.rstStream(streamID: 1, .cancel)])
        guard case .failure(let error)? = harness.results[0] else {
            Issue.record("the cancelled request got no answer")
            return
        }
        #expect(error is CancellationError)
        // The server's late answer on the reset stream is ignored.
        harness.answer(200, on: 1)
        harness.answer(201, on: 3)
        #expect(harness.response(1)?.status == 201 && harness.closes == 0)
    }

    @Test("an idle connection closes after its idle timeout")
    func idle() {
        let harness = Harness(idleTimeout: .seconds(30))
        harness.open()
        harness.send()
        harness.answer(200, on: 1, at: 1)
        harness.loop.advanceTime(to: EmbeddedLoop.at(30))
        #expect(harness.closes == 0)
        harness.loop.advanceTime(to: EmbeddedLoop.at(31.5))
        #expect(harness.closes == 1)
    }
}
