import AuthloadCore
import Testing

@testable import AuthloadWire

/// The frames in what a channel wrote, read as its peer would (a server reads masked frames).
private func framesWritten(by channel: WebSocketChannel, _ actions: [WebSocketChannel.Action]) -> [WebSocketFrame] {
    let bytes = actions.flatMap { action -> [UInt8] in
        if case .write(let bytes) = action { bytes } else { [] }
    }
    return decodeWebSocket(bytes, role: channel.role == .client ? .server : .client).frames
}

private func sent(_ channel: inout WebSocketChannel, _ message: WebSocketMessage) throws -> [UInt8] {
    var output: [UInt8] = []
    try channel.send(message, into: &output)
    return output
}

@Suite struct WebSocketChannelTests {
    @Test("a client masks every frame with a key of its own")
    func clientMasksWithFreshKeys() throws {
        var channel = WebSocketChannel(role: .client)
        var bytes: [UInt8] = []
        for index in 0..<100 { bytes += try sent(&channel, .text("message \(index)")) }
        let outcome = decodeWebSocket(bytes, role: .server)
        #expect(outcome.error == nil, "a server decoder refuses unmasked frames")
        #expect(outcome.messages.count == 100)
        #expect(outcome.messages.last == .text("message 99"))
        let keys = outcome.frames.compactMap(\.maskKey)
        #expect(keys.count == 100)
        #expect(Set(keys).count >= 99, "keys come from a CSPRNG; a repeat in 100 draws of 32 bits is all but impossible")
    }

    @Test("a server sends unmasked frames")
    func serverDoesNotMask() throws {
        var channel = WebSocketChannel(role: .server)
        let bytes = try sent(&channel, .binary([1, 2, 3]))
        #expect(bytes == [0x82, 0x03, 1, 2, 3])
    }

    @Test("answers a ping between fragments with a pong first, then delivers the whole message")
    func pingBetweenFragments() {
        var channel = WebSocketChannel(role: .client)
        let actions = channel.received(
            encodeFrames([
                WebSocketFrame(fin: false, opcode: .text, payload: Array("frag".utf8)), .ping([7, 7]),
                WebSocketFrame(opcode: .continuation, payload: Array("ment".utf8))
            ]))
        #expect(actions.count == 2)
        #expect(framesWritten(by: channel, [actions[0]]).map(\.opcode) == [.pong])
        #expect(framesWritten(by: channel, [actions[0]]).first?.payload == [7, 7])
        #expect(actions[1] == .deliver(.text("fragment")))
    }

    @Test("bytes arriving one at a time give the same actions as arriving at once")
    func byteAtATime() {
        let stream = encodeFrames([.text("a"), .binary([1]), .close(code: .goingAway, reason: "bye")])
        var whole = WebSocketChannel(role: .client)
        let wholeActions = whole.received(stream)
        var split = WebSocketChannel(role: .client)
        var splitActions: [WebSocketChannel.Action] = []
        for byte in stream { splitActions += split.received([byte]) }
        #expect(
            wholeActions.filter { if case .write = $0 { false } else { true } }
                == splitActions.filter { if case .write = $0 { false } else { true } })
        #expect(splitActions.last == .closeConnection(WebSocketClosed(code: 1001, reason: "bye")))
    }

    @Test("echoes a peer's Close code, reports it, and refuses to send afterwards")
    func peerClose() {
        var channel = WebSocketChannel(role: .client)
        let actions = channel.received(encodeFrames([.close(code: .internalError, reason: "boom")]))
        let closed = WebSocketClosed(code: 1011, reason: "boom")
        #expect(actions.last == .closeConnection(closed))
        let echo = framesWritten(by: channel, actions)
        #expect(echo.map(\.opcode) == [.close])
        #expect(echo.first?.payload == [0x03, 0xF3])
        #expect(channel.state == .closed(closed))
        #expect(throws: closed) { try sent(&channel, .text("late")) }
        #expect(channel.received(encodeFrames([.text("after close")])).isEmpty)
    }

    @Test("a Close without a code is echoed empty and reported as 1005")
    func closeWithoutCode() {
        var channel = WebSocketChannel(role: .server)
        let actions = channel.received(encodeFrames([.close(code: nil)], maskKey: 0x0102_0304))
        #expect(framesWritten(by: channel, actions).first?.payload == [])
        #expect(actions.last == .closeConnection(WebSocketClosed(code: 1005)))
    }

    @Test("a closing handshake this end starts ends with the peer's answer, without a second Close")
    func ownClose() throws {
        var channel = WebSocketChannel(role: .client)
        let start = channel.startClose(code: 1000, reason: "done")
        let frames = framesWritten(by: channel, start)
        #expect(frames.first?.payload == [0x03, 0xE8] + Array("done".utf8))
        #expect(channel.state == .closeSent(code: 1000))
        #expect(channel.startClose(code: 1000, reason: "again").isEmpty)
        #expect(throws: WebSocketClosed.self) { try sent(&channel, .text("x")) }
        // Data and pings may still arrive; data is delivered, pings are no longer answered.
        let actions = channel.received(encodeFrames([.text("late"), .ping(), .close(code: .normalClosure)]))
        #expect(actions == [.deliver(.text("late")), .closeConnection(WebSocketClosed(code: 1000))])
    }

    @Test("a Close that never comes back ends as 1006 when the timer fires")
    func closeTimeout() {
        var channel = WebSocketChannel(role: .server)
        #expect(channel.closeTimedOut().isEmpty, "nothing to time out while open")
        _ = channel.startClose(code: 1001, reason: "")
        let actions = channel.closeTimedOut()
        guard case .closeConnection(let closed)? = actions.first else {
            Issue.record("expected the connection to close, got \(actions)")
            return
        }
        #expect(closed.code == 1006)
        #expect(channel.connectionEnded().isEmpty, "the end is reported once")
    }

    @Test("a connection that drops without a Close is reported as 1006")
    func drop() {
        var channel = WebSocketChannel(role: .client)
        #expect(
            channel.connectionEnded() == [
                .closeConnection(
                    WebSocketClosed(
                        code: 1006, reason: "the connection dropped without a closing handshake"))
            ])
    }

    /// A stream that breaks RFC 6455, and the close code it must draw.
    struct Violation: Sendable, CustomTestStringConvertible {
        var name: String
        var role: WebSocketChannel.Role
        var bytes: [UInt8]
        var code: Int
        var testDescription: String { name }
    }

    static let allViolations = [
        Violation(name: "masked frame to a client", role: .client, bytes: encodeFrames([.text("masked")], maskKey: 1), code: 1002),
        Violation(name: "unmasked frame to a server", role: .server, bytes: encodeFrames([.text("unmasked")]), code: 1002),
        Violation(
            name: "text that is not UTF-8", role: .client,
            bytes: encodeFrames([WebSocketFrame(opcode: .text, payload: [0xC3, 0x28])]), code: 1007),
        Violation(
            name: "message over the size limit", role: .client,
            bytes: encodeFrames([.binary(Array(repeating: 0, count: 2000))]), code: 1009),
        Violation(
            name: "continuation with nothing to continue", role: .client,
            bytes: encodeFrames([WebSocketFrame(opcode: .continuation, payload: [1])]), code: 1002)
    ]

    @Test("a peer that breaks the protocol gets a Close with the codec's code", arguments: allViolations)
    func violations(violation: Violation) {
        var channel = WebSocketChannel(role: violation.role, maxMessageSize: 1024)
        let actions = channel.received(violation.bytes)
        #expect(actions.count == 2)
        let close = framesWritten(by: channel, actions)
        #expect(close.map(\.opcode) == [.close])
        #expect(close.first.map { Int($0.payload[0]) << 8 | Int($0.payload[1]) } == violation.code)
        guard case .closeConnection(let closed)? = actions.last else {
            Issue.record("expected the connection to close, got \(actions)")
            return
        }
        #expect(closed.code == violation.code)
        #expect(!closed.reason.isEmpty, "the reason names the violation")
    }
}
