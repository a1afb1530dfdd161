import AuthloadCore
import Testing

@testable import AuthloadWire

/// The client end of a server test: encodes what it sends, and reads back what the server wrote.
struct HTTP2TestClient {
    var encoder = HPACKEncoder()
    var reader = HTTP2FrameDecoder(start: .serverPreface)
    var hpack = HPACKDecoder()

    /// Frames the server wrote in `actions`, decoded; fails the test on bytes a client would refuse.
    mutating func frames(in actions: [HTTP2ServerConnection.Action]) -> [HTTP2Frame] {
        var written: [[UInt8]] = []
        for case .write(let bytes) in actions { written.append(bytes) }
        return decodeFrames(written, with: &reader, by: "a client")
    }

    /// Actions other than writes: what the connection reports to its owner.
    func events(in actions: [HTTP2ServerConnection.Action]) -> [HTTP2ServerConnection.Action] {
        actions.filter { if case .write = $0 { false } else { true } }
    }

    mutating func headers(_ streamID: UInt32, _ headers: [HPACKHeader], endStream: Bool = false) -> HTTP2Frame {
        .headers(streamID: streamID, fragment: encoder.encode(headers), endStream: endStream)
    }

    /// The header list of a HEADERS frame the server wrote.
    mutating func decode(_ frame: HTTP2Frame) throws -> [HPACKHeader] {
        guard case .headers(_, let block, _, _, _, _) = frame else { throw HPACKError(.truncated, at: 0, "not HEADERS: \(frame)") }
        return try hpack.decode(block)
    }
}

@Suite struct HTTP2ServerConnectionTests {
    static func get(_ path: String = "/") -> [HPACKHeader] {
        [
            HPACKHeader(":method", "GET"), HPACKHeader(":scheme", "https"), HPACKHeader(":authority", "login.example.com"),
            HPACKHeader(":path", path)
        ]
    }
    static let post = [
        HPACKHeader(":method", "POST"), HPACKHeader(":scheme", "https"), HPACKHeader(":authority", "login.example.com"),
        HPACKHeader(":path", "/login")
    ]

    static func dataCount(_ frame: HTTP2Frame) -> Int {
        if case .data(_, let data, _, _) = frame { data.count } else { -1 }
    }

    /// A connection past the preface and the SETTINGS exchange, the client's SETTINGS being `clientSettings`.
    static func connected(
        _ client: inout HTTP2TestClient, clientSettings: [HTTP2Setting] = [], settings: HTTP2Settings = .init()
    ) -> HTTP2ServerConnection {
        var connection = HTTP2ServerConnection(settings: settings)
        _ = client.frames(in: connection.start())
        let preface = HTTP2FrameDecoder.clientPreface + bytes(.settings(clientSettings), .settings(ack: true))
        _ = client.frames(in: connection.received(preface))
        return connection
    }

    @Test("reads the client preface, writes SETTINGS with its stream limit and acknowledges the client's")
    func settingsExchange() {
        var client = HTTP2TestClient()
        var settings = HTTP2Settings()
        settings.maxConcurrentStreams = 8
        var connection = HTTP2ServerConnection(settings: settings)
        let first = client.frames(in: connection.start())
        guard case .settings(false, let values) = first.first else {
            Issue.record("no SETTINGS: \(first)")
            return
        }
        #expect(values.contains(HTTP2Setting(.maxConcurrentStreams, 8)))
        #expect(connection.isAwaitingSettingsAcknowledgement)
        let answer = connection.received(HTTP2FrameDecoder.clientPreface + bytes(.settings(), .settings(ack: true)))
        #expect(client.frames(in: answer) == [.settings(ack: true)])
        #expect(!connection.isAwaitingSettingsAcknowledgement)
    }

    @Test("refuses a connection that does not open with the client preface, with GOAWAY PROTOCOL_ERROR")
    func badPreface() {
        var client = HTTP2TestClient()
        var connection = HTTP2ServerConnection()
        _ = client.frames(in: connection.start())
        let actions = connection.received(Array("GET / HTTP/1.1\r\nHost: a\r\n\r\n".utf8))
        #expect(client.events(in: actions) == [.closeConnection(.protocolError)])
        guard case .goAway(0, .protocolError, _)? = client.frames(in: actions).last else {
            Issue.record("no GOAWAY: \(actions)")
            return
        }
    }

    @Test("turns HEADERS into a request, with :path as target, :authority as host and cookies joined")
    func request() throws {
        var client = HTTP2TestClient()
        var connection = Self.connected(&client)
        let head = Self.get("/sdk/login?x=1") + [HPACKHeader("cookie", "a=1"), HPACKHeader("accept", "*/*"), HPACKHeader("cookie", "b=2")]
        let events = client.events(in: connection.received(bytes(client.headers(1, head, endStream: true))))
        guard case .request(1, let request)? = events.first, events.count == 1 else {
            Issue.record("no request: \(events)")
            return
        }
        #expect(request.method == "GET")
        #expect(request.target == "/sdk/login?x=1")
        #expect(request.headers["host"] == "login.example.com")
        #expect(request.headers["cookie"] == "a=1; b=2")
        #expect(request.headers["accept"] == "*/*")
        #expect(request.body.isEmpty)
        #expect(connection.state(of: 1) == .halfClosedRemote)
    }

    @Test("answers with HEADERS and DATA, :status first and content-length set, then closes the stream")
    func response() throws {
        var client = HTTP2TestClient()
        var connection = Self.connected(&client)
        _ = connection.received(bytes(client.headers(1, Self.get(), endStream: true)))
        let response = HTTPResponse(
            status: 200, headers: ["Content-Type": "application/json", "Connection": "keep-alive"], body: Array("{}".utf8))
        let frames = client.frames(in: connection.respond(to: 1, with: response))
        #expect(frames.count == 2)
        let head = try client.decode(frames[0])
        #expect(
            head == [HPACKHeader(":status", "200"), HPACKHeader("content-type", "application/json"), HPACKHeader("content-length", "2")])
        #expect(frames[1] == .data(streamID: 1, data: Array("{}".utf8), endStream: true))
        #expect(connection.state(of: 1) == .closed)
        #expect(connection.activeStreamCount == 0)
    }

    @Test("a HEAD, a 204 or an empty body ends the stream on HEADERS alone")
    func bodylessResponses() throws {
        var client = HTTP2TestClient()
        var connection = Self.connected(&client)
        _ = connection.received(bytes(client.headers(1, Self.get(), endStream: true), client.headers(3, Self.get(), endStream: true)))
        let head = client.frames(in: connection.respond(to: 1, with: HTTPResponse(status: 200, body: [1, 2, 3]), respondingToHEAD: true))
        guard case .headers(1, _, true, true, _, _) = head.first, head.count == 1 else {
            Issue.record("not one HEADERS with END_STREAM: \(head)")
            return
        }
        #expect(try client.decode(head[0]).contains(HPACKHeader("content-length", "3")))
        let noContent = client.frames(in: connection.respond(to: 3, with: HTTPResponse(status: 204)))
        #expect(noContent.count == 1)
        #expect(try client.decode(noContent[0]) == [HPACKHeader(":status", "204")])
        #expect(connection.activeStreamCount == 0)
    }

    @Test("joins a request head split over CONTINUATION frames")
    func continuation() throws {
        var client = HTTP2TestClient()
        var connection = Self.connected(&client)
        let head = Self.post + [HPACKHeader("x-long", String(repeating: "v", count: 300))]
        let frames = HTTP2FrameEncoder.headerFrames(streamID: 1, block: client.encoder.encode(head), endStream: true, maxFrameSize: 50)
        #expect(frames.count > 3)
        let events = client.events(in: connection.received(frames.flatMap { HTTP2FrameEncoder.encode($0) }))
        guard case .request(1, let request)? = events.first else {
            Issue.record("no request: \(events)")
            return
        }
        #expect(request.headers["x-long"]?.count == 300)
    }

    @Test("gathers a body over DATA frames, opening both windows again as it arrives, and checks content-length")
    func requestBody() throws {
        var client = HTTP2TestClient()
        var connection = Self.connected(&client)
        let body = (0..<100_000).map { UInt8(truncatingIfNeeded: $0) }
        var written: [HTTP2Frame] = []
        var events: [HTTP2ServerConnection.Action] = []
        let head = client.headers(1, Self.post + [HPACKHeader("content-length", "100000")])
        var actions = connection.received(bytes(head))
        var offset = 0
        var window = 65_535
        while offset < body.count {
            // The client sends no more than the windows the server granted so far.
            let count = min(16_384, body.count - offset, window)
            #expect(count > 0, "the server stopped opening its window at \(offset) bytes")
            if count == 0 { break }
            let end = offset + count == body.count
            actions += connection.received(bytes(.data(streamID: 1, data: Array(body[offset..<offset + count]), endStream: end)))
            offset += count
            window -= count
            for frame in client.frames(in: actions) {
                written.append(frame)
                if case .windowUpdate(1, let increment) = frame { window += Int(increment) }
            }
            events += client.events(in: actions)
            actions = []
        }
        #expect(written.contains { if case .windowUpdate(0, _) = $0 { true } else { false } })
        guard case .request(1, let request)? = events.first else {
            Issue.record("no request: \(events)")
            return
        }
        #expect(request.body == body)
    }

    @Test("holds response DATA to the client's windows and sends the rest as WINDOW_UPDATE opens them")
    func responseFlowControl() throws {
        var client = HTTP2TestClient()
        var connection = Self.connected(&client, clientSettings: [HTTP2Setting(.initialWindowSize, 10_000)])
        _ = connection.received(bytes(client.headers(1, Self.get(), endStream: true)))
        let body = [UInt8](repeating: 7, count: 25_000)
        let first = client.frames(in: connection.respond(to: 1, with: HTTPResponse(status: 200, body: body)))
        #expect(first.dropFirst().map(Self.dataCount) == [10_000])
        #expect(connection.state(of: 1) == .halfClosedRemote)
        let second = client.frames(in: connection.received(bytes(.windowUpdate(streamID: 1, increment: 20_000))))
        #expect(second.map(Self.dataCount) == [15_000])
        #expect(second.last == .data(streamID: 1, data: [UInt8](repeating: 7, count: 15_000), endStream: true))
        #expect(connection.state(of: 1) == .closed)
    }

    @Test("resets a stream whose DATA overrun the window it was granted with FLOW_CONTROL_ERROR")
    func streamWindowOverrun() {
        var client = HTTP2TestClient()
        var settings = HTTP2Settings()
        settings.initialWindowSize = 100
        var connection = Self.connected(&client, settings: settings)
        _ = connection.received(bytes(client.headers(1, Self.post)))
        let actions = connection.received(bytes(.data(streamID: 1, data: [UInt8](repeating: 0, count: 101))))
        #expect(client.frames(in: actions).last == .rstStream(streamID: 1, .flowControlError))
        #expect(client.events(in: actions) == [.streamReset(streamID: 1, .flowControlError)])
    }

    @Test("refuses a stream past its SETTINGS_MAX_CONCURRENT_STREAMS with REFUSED_STREAM and serves the next one")
    func concurrencyLimit() throws {
        var client = HTTP2TestClient()
        var settings = HTTP2Settings()
        settings.maxConcurrentStreams = 2
        var connection = Self.connected(&client, settings: settings)
        let actions = connection.received(
            bytes(
                client.headers(1, Self.get(), endStream: true), client.headers(3, Self.get(), endStream: true),
                client.headers(5, Self.get(), endStream: true)))
        #expect(client.frames(in: actions) == [.rstStream(streamID: 5, .refusedStream)])
        #expect(client.events(in: actions).count == 3)
        #expect(connection.state(of: 5) == .closed)
        _ = connection.respond(to: 1, with: HTTPResponse(status: 204))
        let next = client.events(in: connection.received(bytes(client.headers(7, Self.get(), endStream: true))))
        guard case .request(7, _)? = next.first else {
            Issue.record("stream 7 not served: \(next)")
            return
        }
    }

    @Test(
        "resets a malformed request with PROTOCOL_ERROR and keeps the connection",
        arguments: [
            (
                "no :path", [HPACKHeader(":method", "GET"), HPACKHeader(":scheme", "https")],
                HTTP2MalformedRequest.Reason.missingPseudoHeader
            ),
            ("no :method", [HPACKHeader(":scheme", "https"), HPACKHeader(":path", "/")], .missingPseudoHeader),
            ("a response pseudo-header", get() + [HPACKHeader(":status", "200")], .unknownPseudoHeader),
            (
                "a pseudo-header after a field", [HPACKHeader(":method", "GET"), HPACKHeader("accept", "*/*"), HPACKHeader(":path", "/")],
                .pseudoHeaderAfterField
            ),
            ("a pseudo-header twice", get() + [HPACKHeader(":path", "/b")], .duplicatePseudoHeader),
            ("an upper-case field name", get() + [HPACKHeader("Accept", "*/*")], .invalidFieldName),
            ("a connection-specific field", get() + [HPACKHeader("connection", "keep-alive")], .connectionSpecificField),
            ("te other than trailers", get() + [HPACKHeader("te", "gzip")], .connectionSpecificField),
            ("a value with CR LF", get() + [HPACKHeader("x-a", "1\r\nx-b: 2")], .invalidFieldValue),
            (
                "a relative :path", [HPACKHeader(":method", "GET"), HPACKHeader(":scheme", "https"), HPACKHeader(":path", "login")],
                .invalidPath
            )
        ])
    func malformed(name: String, headers: [HPACKHeader], reason: HTTP2MalformedRequest.Reason) throws {
        #expect(throws: HTTP2MalformedRequest.self) { try HTTP2MessageHead.request(from: headers) }
        do throws(HTTP2MalformedRequest) {
            _ = try HTTP2MessageHead.request(from: headers)
        } catch {
            #expect(error.reason == reason)
            #expect(error.description.contains("field "))
        }
        var client = HTTP2TestClient()
        var connection = Self.connected(&client)
        let actions = connection.received(bytes(client.headers(1, headers, endStream: true)))
        #expect(client.frames(in: actions) == [.rstStream(streamID: 1, .protocolError)])
        let next = client.events(in: connection.received(bytes(client.headers(3, Self.get(), endStream: true))))
        guard case .request(3, _)? = next.first else {
            Issue.record("the connection did not go on: \(next)")
            return
        }
    }

    @Test("resets a malformed request once, whether its DATA come in the same read as its head or in another")
    func malformedThenData() {
        var client = HTTP2TestClient()
        let head = client.headers(1, [HPACKHeader(":method", "POST"), HPACKHeader(":scheme", "https")])
        let data = HTTP2Frame.data(streamID: 1, data: [1, 2], endStream: true)
        var together = Self.connected(&client)
        let once = together.received(bytes(head, data))
        var apart = Self.connected(&client)
        let twice = apart.received(bytes(head)) + apart.received(bytes(data))
        #expect(once == twice)
        #expect(client.events(in: once) == [.streamReset(streamID: 1, .protocolError)])
    }

    @Test("resets a stream whose DATA add up to another length than content-length says")
    func contentLengthMismatch() {
        var client = HTTP2TestClient()
        var connection = Self.connected(&client)
        let head = client.headers(1, Self.post + [HPACKHeader("content-length", "5")])
        let actions = connection.received(bytes(head, .data(streamID: 1, data: [1, 2, 3], endStream: true)))
        #expect(client.frames(in: actions) == [.rstStream(streamID: 1, .protocolError)])
        let long = client.headers(3, Self.post + [HPACKHeader("content-length", "2")])
        #expect(
            client.frames(in: connection.received(bytes(long, .data(streamID: 3, data: [1, 2, 3])))) == [
                .rstStream(streamID: 3, .protocolError)
            ])
    }

    @Test("answers a body past its limit with 413 and RST_STREAM NO_ERROR")
    func bodyTooLarge() throws {
        var client = HTTP2TestClient()
        var connection = HTTP2ServerConnection(maxBodyBytes: 10)
        _ = client.frames(in: connection.start())
        _ = connection.received(HTTP2FrameDecoder.clientPreface + bytes(.settings()))
        let actions = connection.received(bytes(client.headers(1, Self.post), .data(streamID: 1, data: [UInt8](repeating: 0, count: 11))))
        let frames = client.frames(in: actions).filter { if case .settings = $0 { false } else { true } }
        #expect(frames.count == 2)
        #expect(try client.decode(frames[0]).first == HPACKHeader(":status", "413"))
        #expect(frames.last == .rstStream(streamID: 1, .noError))
        #expect(client.events(in: actions).allSatisfy { if case .request = $0 { false } else { true } })
    }

    @Test("drops the answer to a stream the client reset, and reports the reset")
    func clientReset() {
        var client = HTTP2TestClient()
        var connection = Self.connected(&client)
        _ = connection.received(bytes(client.headers(1, Self.get(), endStream: true)))
        #expect(connection.received(bytes(.rstStream(streamID: 1, .cancel))) == [.streamReset(streamID: 1, .cancel)])
        #expect(connection.respond(to: 1, with: HTTPResponse(status: 200, body: [1])).isEmpty)
    }

    @Test("a graceful close writes GOAWAY with the last stream taken, answers it and refuses later streams")
    func gracefulClose() throws {
        var client = HTTP2TestClient()
        var connection = Self.connected(&client)
        _ = connection.received(bytes(client.headers(1, Self.get(), endStream: true)))
        #expect(client.frames(in: connection.close()) == [.goAway(lastStreamID: 1, .noError)])
        #expect(connection.isClosing)
        #expect(connection.close().isEmpty)
        let late = connection.received(bytes(client.headers(3, Self.get(), endStream: true)))
        #expect(client.frames(in: late) == [.rstStream(streamID: 3, .refusedStream)])
        #expect(client.frames(in: connection.respond(to: 1, with: HTTPResponse(status: 204))).count == 1)
        #expect(connection.activeStreamCount == 0)
    }

    @Test("answers PING and reports the client's GOAWAY without ending the streams it opened")
    func pingAndClientGoAway() {
        var client = HTTP2TestClient()
        var connection = Self.connected(&client)
        #expect(client.frames(in: connection.received(bytes(.ping(data: 9)))) == [.ping(ack: true, data: 9)])
        _ = connection.received(bytes(client.headers(1, Self.get(), endStream: true)))
        #expect(connection.received(bytes(.goAway(lastStreamID: 0, .noError))) == [.goAway(.noError, debugData: [])])
        #expect(connection.state(of: 1) == .halfClosedRemote)
    }

    @Test(
        "fails the connection with GOAWAY naming the last stream and the RFC 9113 code",
        arguments: [
            ("HEADERS on an even stream", bytes(.headers(streamID: 2, fragment: [0x82])), HTTP2ErrorCode.protocolError),
            ("DATA on an idle stream", bytes(.data(streamID: 5, data: [1])), .protocolError),
            ("DATA on a closed stream", bytes(.data(streamID: 1, data: [1])), .streamClosed),
            ("HEADERS on a closed stream", bytes(.headers(streamID: 1, fragment: [0x82], endStream: true)), .streamClosed),
            ("WINDOW_UPDATE on an idle stream", bytes(.windowUpdate(streamID: 9, increment: 1)), .protocolError),
            ("RST_STREAM on an idle stream", bytes(.rstStream(streamID: 9, .cancel)), .protocolError),
            ("PUSH_PROMISE from a client", bytes(.pushPromise(streamID: 1, promisedStreamID: 2, fragment: [0x82])), .protocolError),
            ("connection window past 2^31-1", bytes(.windowUpdate(streamID: 0, increment: 0x7FFF_FFFF)), .flowControlError),
            ("a frame over 16 KB", hexBytes("00 40 01 00 00 00 00 00 03") + [UInt8](repeating: 0, count: 16_385), .frameSizeError),
            ("a CONTINUATION with no header block", bytes(.continuation(streamID: 3, fragment: [0x82])), .protocolError),
            (
                "a header block HPACK cannot decode", bytes(.headers(streamID: 3, fragment: [0xff, 0xff, 0xff, 0xff, 0xff, 0x0f])),
                .compressionError
            )
        ])
    func connectionErrors(name: String, input: [UInt8], code: HTTP2ErrorCode) throws {
        var client = HTTP2TestClient()
        var connection = Self.connected(&client)
        _ = connection.received(bytes(client.headers(1, Self.get(), endStream: true)))
        _ = connection.respond(to: 1, with: HTTPResponse(status: 204))
        // Stream 3 is open and may take DATA; the connection window stays at the default, as the client never widened it.
        _ = connection.received(bytes(client.headers(3, Self.post)))
        let actions = connection.received(input)
        #expect(actions.last == .closeConnection(code), "\(name): \(actions.suffix(2))")
        guard case .goAway(3, code, _)? = client.frames(in: actions).last else {
            Issue.record("no GOAWAY naming stream 3: \(actions)")
            return
        }
        #expect(connection.received(bytes(.ping(data: 1))).isEmpty)
    }
}
