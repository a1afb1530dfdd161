import Testing

@testable import AuthloadWire

/// The server end of a test: encodes what it sends, and reads back what the client wrote.
struct HTTP2TestServer {
    var encoder = HPACKEncoder()
    var reader = HTTP2FrameDecoder(start: .clientPreface)

    /// Frames written by the client in `actions`, decoded; fails the test on bytes a server would refuse.
    mutating func frames(in actions: [HTTP2Connection.Action]) -> [HTTP2Frame] {
        var written: [[UInt8]] = []
        for case .write(let bytes) in actions { written.append(bytes) }
        return decodeFrames(written, with: &reader, by: "a server")
    }

    /// Actions other than writes: what the connection reports to its owner.
    func events(in actions: [HTTP2Connection.Action]) -> [HTTP2Connection.Action] {
        actions.filter { if case .write = $0 { false } else { true } }
    }

    mutating func headers(_ streamID: UInt32, _ headers: [HPACKHeader], endStream: Bool = false) -> HTTP2Frame {
        .headers(streamID: streamID, fragment: encoder.encode(headers), endStream: endStream)
    }
}

/// The frames in what one side wrote, read as `peer` reads them; bytes that peer would refuse fail the test.
func decodeFrames(_ written: [[UInt8]], with reader: inout HTTP2FrameDecoder, by peer: String) -> [HTTP2Frame] {
    var frames: [HTTP2Frame] = []
    for bytes in written {
        reader.feed(bytes)
        do throws(HTTP2FrameError) {
            while case .frame(let frame) = try reader.next() { frames.append(frame) }
        } catch {
            Issue.record("wrote bytes \(peer) refuses: \(error)")
        }
    }
    return frames
}

func bytes(_ frames: HTTP2Frame...) -> [UInt8] { frames.flatMap { HTTP2FrameEncoder.encode($0) } }

@Suite struct HTTP2ConnectionTests {
    static let get = [
        HPACKHeader(":method", "GET"), HPACKHeader(":scheme", "https"), HPACKHeader(":authority", "login.example.com"),
        HPACKHeader(":path", "/")
    ]
    static let post = [
        HPACKHeader(":method", "POST"), HPACKHeader(":scheme", "https"), HPACKHeader(":authority", "login.example.com"),
        HPACKHeader(":path", "/login")
    ]

    /// A connection past the SETTINGS exchange, the server's SETTINGS being `serverSettings`.
    static func connected(
        _ server: inout HTTP2TestServer, serverSettings: [HTTP2Setting] = [], settings: HTTP2Connection.Settings = .init()
    ) -> HTTP2Connection {
        var connection = HTTP2Connection(settings: settings)
        _ = server.frames(in: connection.start())
        _ = server.frames(in: connection.received(bytes(.settings(serverSettings), .settings(ack: true))))
        return connection
    }

    @Test("writes the preface and SETTINGS with push off, then acknowledges the server's SETTINGS")
    func settingsExchange() {
        var server = HTTP2TestServer()
        var connection = HTTP2Connection()
        let start = connection.start()
        guard case .write(let first) = start.first else {
            Issue.record("no write")
            return
        }
        #expect(Array(first.prefix(24)) == HTTP2FrameDecoder.clientPreface)
        let written = server.frames(in: start)
        guard case .settings(false, let values) = written.first else {
            Issue.record("no SETTINGS: \(written)")
            return
        }
        #expect(values.contains(HTTP2Setting(.enablePush, 0)))
        #expect(
            server.frames(in: connection.received(bytes(.settings([HTTP2Setting(.maxConcurrentStreams, 10)])))) == [.settings(ack: true)])
    }

    @Test("a request and its response take a stream from idle through half-closed to closed")
    func streamStates() throws {
        var server = HTTP2TestServer()
        var connection = Self.connected(&server)
        #expect(connection.state(of: 1) == .idle)
        let (id, actions) = try connection.sendHeaders(Self.get, endStream: true)
        #expect(id == 1)
        #expect(connection.state(of: 1) == .halfClosedLocal)
        var decoder = HPACKDecoder()
        guard case .headers(1, let block, true, true, nil, nil) = server.frames(in: actions).first else {
            Issue.record("no HEADERS")
            return
        }
        #expect(try decoder.decode(block) == Self.get)

        let head = server.headers(1, [HPACKHeader(":status", "200")])
        let events = connection.received(bytes(head, .data(streamID: 1, data: Array("ok".utf8), endStream: true)))
        #expect(
            events == [
                .headers(streamID: 1, [HPACKHeader(":status", "200")], endStream: false),
                .data(streamID: 1, Array("ok".utf8), endStream: true)
            ])
        #expect(connection.state(of: 1) == .closed)
        #expect(try connection.sendHeaders(Self.get, endStream: true).streamID == 3)
    }

    @Test("a stream the client still sends on is half-closed (remote) after the server's END_STREAM")
    func halfClosedRemote() throws {
        var server = HTTP2TestServer()
        var connection = Self.connected(&server)
        let (id, _) = try connection.sendHeaders(Self.post, endStream: false)
        _ = connection.received(bytes(server.headers(id, [HPACKHeader(":status", "413")], endStream: true)))
        #expect(connection.state(of: id) == .halfClosedRemote)
        let frames = server.frames(in: try connection.sendData(streamID: id, [1, 2], endStream: true))
        #expect(frames == [.data(streamID: id, data: [1, 2], endStream: true)])
        #expect(connection.state(of: id) == .closed)
    }

    @Test("holds DATA back to the server's stream window and sends the rest as WINDOW_UPDATE opens it")
    func streamSendWindow() throws {
        var server = HTTP2TestServer()
        var connection = Self.connected(&server, serverSettings: [HTTP2Setting(.initialWindowSize, 10)])
        let (id, _) = try connection.sendHeaders(Self.post, endStream: false)
        let body = (0..<25).map { UInt8($0) }
        #expect(
            server.frames(in: try connection.sendData(streamID: id, body, endStream: true)) == [
                .data(streamID: id, data: Array(body[0..<10]))
            ])
        #expect(connection.sendWindow(of: id) == 0)
        #expect(
            server.frames(in: connection.received(bytes(.windowUpdate(streamID: id, increment: 10))))
                == [.data(streamID: id, data: Array(body[10..<20]))])
        #expect(
            server.frames(in: connection.received(bytes(.windowUpdate(streamID: id, increment: 100))))
                == [.data(streamID: id, data: Array(body[20..<25]), endStream: true)])
        #expect(connection.state(of: id) == .halfClosedLocal)
        #expect(connection.sendWindow == 65_535 - 25)
    }

    @Test("holds DATA back to the connection window, in frames no larger than the server allows")
    func connectionSendWindow() throws {
        var server = HTTP2TestServer()
        var connection = Self.connected(&server, serverSettings: [HTTP2Setting(.initialWindowSize, 1 << 20)])
        let (id, _) = try connection.sendHeaders(Self.post, endStream: false)
        let frames = server.frames(in: try connection.sendData(streamID: id, [UInt8](repeating: 1, count: 70_000), endStream: true))
        let sizes = frames.map { frame -> Int in
            if case .data(_, let data, _, _) = frame { return data.count }
            return -1
        }
        #expect(sizes == [16_384, 16_384, 16_384, 16_383])
        #expect(connection.sendWindow == 0)
        let rest = server.frames(in: connection.received(bytes(.windowUpdate(streamID: 0, increment: 10_000))))
        #expect(rest == [.data(streamID: id, data: [UInt8](repeating: 1, count: 70_000 - 65_535), endStream: true)])
    }

    @Test("a lower SETTINGS_INITIAL_WINDOW_SIZE can leave a stream's window negative until WINDOW_UPDATE")
    func initialWindowChange() throws {
        var server = HTTP2TestServer()
        var connection = Self.connected(&server)
        let (id, _) = try connection.sendHeaders(Self.post, endStream: false)
        _ = try connection.sendData(streamID: id, [UInt8](repeating: 0, count: 100), endStream: false)
        _ = connection.received(bytes(.settings([HTTP2Setting(.initialWindowSize, 50)])))
        #expect(connection.sendWindow(of: id) == 50 - 100)
        #expect(server.frames(in: try connection.sendData(streamID: id, [9], endStream: true)).isEmpty)
        let frames = server.frames(in: connection.received(bytes(.windowUpdate(streamID: id, increment: 51))))
        #expect(frames == [.data(streamID: id, data: [9], endStream: true)])

        let (other, _) = try connection.sendHeaders(Self.post, endStream: false)
        _ = try connection.sendData(streamID: other, [UInt8](repeating: 0, count: 50), endStream: false)
        _ = connection.received(bytes(.settings([HTTP2Setting(.initialWindowSize, 0)])))
        #expect(connection.sendWindow(of: other) == -50)
        let end = server.frames(in: try connection.sendData(streamID: other, [], endStream: true))
        #expect(end == [.data(streamID: other, data: [], endStream: true)])
    }

    @Test("opens its receive windows again as DATA arrives, and resets a stream that overruns its window")
    func receiveWindows() throws {
        var server = HTTP2TestServer()
        var settings = HTTP2Connection.Settings()
        settings.initialWindowSize = 100
        var connection = Self.connected(&server, settings: settings)
        let (id, _) = try connection.sendHeaders(Self.get, endStream: true)
        _ = connection.received(bytes(server.headers(id, [HPACKHeader(":status", "200")])))
        let first = server.frames(in: connection.received(bytes(.data(streamID: id, data: [UInt8](repeating: 0, count: 60)))))
        #expect(first == [.windowUpdate(streamID: id, increment: 60)])
        #expect(connection.receiveWindow == 65_535 - 60)
        let overrun = connection.received(bytes(.data(streamID: id, data: [UInt8](repeating: 0, count: 90), padding: 10)))
        #expect(server.frames(in: overrun) == [.rstStream(streamID: id, .flowControlError)])
        #expect(server.events(in: overrun) == [.streamReset(streamID: id, .flowControlError)])
        #expect(connection.state(of: id) == .closed)
        #expect(connection.received(bytes(.data(streamID: id, data: [1]))).isEmpty)
    }

    @Test("refills the connection window once it is half used")
    func connectionReceiveWindow() throws {
        var server = HTTP2TestServer()
        var settings = HTTP2Connection.Settings()
        settings.initialWindowSize = 1 << 20
        var connection = Self.connected(&server, settings: settings)
        let (id, _) = try connection.sendHeaders(Self.get, endStream: true)
        var frames: [HTTP2Frame] = []
        for _ in 0..<3 {
            frames += server.frames(in: connection.received(bytes(.data(streamID: id, data: [UInt8](repeating: 0, count: 16_000)))))
        }
        #expect(frames == [.windowUpdate(streamID: 0, increment: 48_000)])
        #expect(connection.receiveWindow == 65_535)
    }

    @Test("joins a response head sent as HEADERS and CONTINUATION, and splits a large request head the same way")
    func continuation() throws {
        var server = HTTP2TestServer()
        var connection = Self.connected(&server)
        let cookie = HPACKHeader("cookie", String(repeating: "s", count: 40_000), indexing: .withoutIndexing)
        let (id, actions) = try connection.sendHeaders(Self.get + [cookie], endStream: true)
        let written = server.frames(in: actions)
        #expect(written.count == 2)
        guard case .continuation(id, _, true) = written.last else {
            Issue.record("no CONTINUATION: \(written)")
            return
        }
        let response = [HPACKHeader(":status", "200"), HPACKHeader("set-cookie", "sid=abc")]
        let frames = HTTP2FrameEncoder.headerFrames(streamID: id, block: server.encoder.encode(response), endStream: true, maxFrameSize: 3)
        #expect(frames.count > 2)
        #expect(connection.received(frames.flatMap { HTTP2FrameEncoder.encode($0) }) == [.headers(streamID: id, response, endStream: true)])
    }

    @Test("ignores a response to a stream it reset, keeping HPACK in step for the next one")
    func ignoresResetStream() throws {
        var server = HTTP2TestServer()
        var connection = Self.connected(&server)
        let (first, _) = try connection.sendHeaders(Self.get, endStream: true)
        let (second, _) = try connection.sendHeaders(Self.get, endStream: true)
        #expect(server.frames(in: connection.resetStream(first)) == [.rstStream(streamID: first, .cancel)])
        let late = server.headers(first, [HPACKHeader(":status", "200"), HPACKHeader("x-trace", "1")])
        #expect(connection.received(bytes(late, .data(streamID: first, data: [1], endStream: true))).isEmpty)
        let next = server.headers(second, [HPACKHeader(":status", "200"), HPACKHeader("x-trace", "1")], endStream: true)
        #expect(
            connection.received(bytes(next))
                == [.headers(streamID: second, [HPACKHeader(":status", "200"), HPACKHeader("x-trace", "1")], endStream: true)])
    }

    @Test("remembers only its latest resets: a frame for a stream reset long ago is a connection error, not ignored")
    func resetMemoryIsBounded() throws {
        var server = HTTP2TestServer()
        var connection = Self.connected(&server)
        var reset: [UInt32] = []
        for _ in 0...HTTP2Connection.resetMemory {
            let (id, _) = try connection.sendHeaders(Self.get, endStream: true)
            _ = connection.resetStream(id)
            reset.append(id)
        }
        let recent = server.headers(reset.last!, [HPACKHeader(":status", "200")], endStream: true)
        #expect(connection.received(bytes(recent)).isEmpty, "the latest reset is still remembered")
        let forgotten = server.headers(reset.first!, [HPACKHeader(":status", "200")], endStream: true)
        let events = server.events(in: connection.received(bytes(forgotten)))
        #expect(events == [.closeConnection(.streamClosed)], "\(events)")
    }

    @Test("leaves the SETTINGS timeout to its owner and fails with SETTINGS_TIMEOUT when told")
    func settingsTimeout() {
        var server = HTTP2TestServer()
        var connection = HTTP2Connection()
        _ = server.frames(in: connection.start())
        #expect(connection.isAwaitingSettingsAcknowledgement)
        _ = connection.received(bytes(.settings()))
        #expect(connection.isAwaitingSettingsAcknowledgement)
        let actions = connection.settingsTimedOut()
        #expect(server.frames(in: actions).last.map { if case .goAway(0, .settingsTimeout, _) = $0 { true } else { false } } == true)
        #expect(actions.last == .closeConnection(.settingsTimeout))
        var fresh = HTTP2TestServer()
        #expect(Self.connected(&fresh).isAwaitingSettingsAcknowledgement == false)
    }

    @Test("a graceful close writes GOAWAY, lets open streams finish and opens no new one")
    func gracefulClose() throws {
        var server = HTTP2TestServer()
        var connection = Self.connected(&server)
        let (id, _) = try connection.sendHeaders(Self.get, endStream: true)
        #expect(server.frames(in: connection.close()) == [.goAway(lastStreamID: 0, .noError)])
        #expect(connection.close().isEmpty)
        #expect(throws: HTTP2Connection.UsageError.connectionClosing) { try connection.sendHeaders(Self.get, endStream: true) }
        let response = connection.received(bytes(server.headers(id, [HPACKHeader(":status", "204")], endStream: true)))
        #expect(response == [.headers(streamID: id, [HPACKHeader(":status", "204")], endStream: true)])
    }

    @Test("answers PING and reports the answer to its own")
    func ping() {
        var server = HTTP2TestServer()
        var connection = Self.connected(&server)
        #expect(server.frames(in: connection.received(bytes(.ping(data: 42)))) == [.ping(ack: true, data: 42)])
        #expect(server.frames(in: connection.ping(7)) == [.ping(data: 7)])
        #expect(connection.received(bytes(.ping(ack: true, data: 7))) == [.pingAcknowledged(7)])
    }

    @Test("after GOAWAY refuses the streams above its last stream and opens no new one")
    func goAway() throws {
        var server = HTTP2TestServer()
        var connection = Self.connected(&server)
        for _ in 0..<3 { _ = try connection.sendHeaders(Self.get, endStream: true) }
        let actions = connection.received(bytes(.goAway(lastStreamID: 3, .noError)))
        #expect(actions == [.goAway(lastStreamID: 3, .noError, debugData: []), .streamReset(streamID: 5, .refusedStream)])
        #expect(connection.state(of: 3) == .halfClosedLocal)
        #expect(throws: HTTP2Connection.UsageError.connectionClosing) { try connection.sendHeaders(Self.get, endStream: true) }
    }

    @Test("reports a reset from the server and closes the stream")
    func serverReset() throws {
        var server = HTTP2TestServer()
        var connection = Self.connected(&server)
        let (id, _) = try connection.sendHeaders(Self.get, endStream: true)
        #expect(connection.received(bytes(.rstStream(streamID: id, .refusedStream))) == [.streamReset(streamID: id, .refusedStream)])
        #expect(connection.state(of: id) == .closed)
    }

    @Test("opens no more streams than the server's SETTINGS_MAX_CONCURRENT_STREAMS")
    func concurrency() throws {
        var server = HTTP2TestServer()
        var connection = Self.connected(&server, serverSettings: [HTTP2Setting(.maxConcurrentStreams, 1)])
        let (id, _) = try connection.sendHeaders(Self.get, endStream: true)
        #expect(throws: HTTP2Connection.UsageError.tooManyStreams) { try connection.sendHeaders(Self.get, endStream: true) }
        _ = connection.received(bytes(server.headers(id, [HPACKHeader(":status", "204")], endStream: true)))
        #expect(try connection.sendHeaders(Self.get, endStream: true).streamID == 3)
    }

    @Test(
        "fails the connection with GOAWAY and the RFC 9113 code",
        arguments: [
            ("DATA on an idle stream", bytes(.data(streamID: 7, data: [1])), HTTP2ErrorCode.protocolError),
            ("HEADERS on a stream the client never opened", bytes(.headers(streamID: 2, fragment: [0x88])), .protocolError),
            ("PUSH_PROMISE with push disabled", bytes(.pushPromise(streamID: 1, promisedStreamID: 2, fragment: [0x82])), .protocolError),
            ("SETTINGS_ENABLE_PUSH 1 from a server", bytes(.settings([HTTP2Setting(.enablePush, 1)])), .protocolError),
            ("connection window past 2^31-1", bytes(.windowUpdate(streamID: 0, increment: 0x7FFF_FFFF)), .flowControlError),
            ("WINDOW_UPDATE on an idle stream", bytes(.windowUpdate(streamID: 9, increment: 1)), .protocolError),
            ("RST_STREAM on an idle stream", bytes(.rstStream(streamID: 9, .cancel)), .protocolError),
            ("PING of 7 bytes", hexBytes("00 00 07 06 00 00 00 00 00 00 00 00 00 00 00 00"), .frameSizeError),
            (
                "a header block HPACK cannot decode", bytes(.headers(streamID: 1, fragment: [0xff, 0xff, 0xff, 0xff, 0xff, 0x0f])),
                .compressionError
            )
        ])
    func connectionErrors(name: String, input: [UInt8], code: HTTP2ErrorCode) throws {
        var server = HTTP2TestServer()
        var connection = Self.connected(&server)
        _ = try connection.sendHeaders(Self.get, endStream: true)
        let actions = connection.received(input)
        #expect(actions.last == .closeConnection(code))
        guard case .goAway(0, code, _)? = server.frames(in: actions).last else {
            Issue.record("no GOAWAY: \(actions)")
            return
        }
        #expect(connection.received(bytes(.ping(data: 1))).isEmpty)
        #expect(throws: HTTP2Connection.UsageError.connectionClosing) { try connection.sendHeaders(Self.get, endStream: true) }
    }

    @Test("fails the connection when the server's first frame is not SETTINGS")
    func missingServerSettings() {
        var connection = HTTP2Connection()
        _ = connection.start()
        #expect(connection.received(bytes(.ping(data: 1))).last == .closeConnection(.protocolError))
    }
}
