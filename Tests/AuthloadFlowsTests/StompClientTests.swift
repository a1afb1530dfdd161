import AuthloadCore
import AuthloadTesting
import AuthloadWire
import Testing

@testable import AuthloadFlows

private let connected = "CONNECTED\nversion:1.2\n\n\0"

/// A server that answers CONNECT and any frame that asks for a receipt.
@Sendable private func politeServer(_ text: String) -> [String] {
    if text.hasPrefix("CONNECT") { return [connected] }
    if let line = text.split(separator: "\n").first(where: { $0.hasPrefix("receipt:") }) {
        return ["RECEIPT\nreceipt-id:\(line.dropFirst("receipt:".count))\n\n\0"]
    }
    return []
}

private func message(_ body: String, id: Int = 1) -> String {
    "MESSAGE\ndestination:/user/queue\nsubscription:/user/queue\nmessage-id:\(id)\n\n\(body)\0"
}

@Suite("STOMP client over a scripted WebSocket", .timeLimit(.minutes(1)))
struct StompClientTests {
    let clock = ManualClock()

    @Test("CONNECT carries accept-version 1.1,1.2 and no host or heart-beat, like the GCCS client")
    func connectFrame() async throws {
        let socket = ScriptedSocket(clock: clock, reply: politeServer)
        var stomp = StompClient(socket: socket, clock: clock)
        let reply = try await stomp.connect(.connect(), until: clock.now.advanced(by: .seconds(5)))
        #expect(reply.command == .connected)
        #expect(socket.sentTexts == ["CONNECT\naccept-version:1.1,1.2\n\n\0"])
        #expect(stomp.heartBeat.clientToServer == nil && stomp.heartBeat.serverToClient == nil)
    }

    @Test("two frames in one WebSocket message come out as two frames, in order")
    func twoFramesInOneMessage() async throws {
        let socket = ScriptedSocket(clock: clock)
        var stomp = StompClient(socket: socket, clock: clock)
        socket.arrive(message("{\"status\":\"CreateChannel\"}", id: 1) + "\n" + message("{\"status\":\"SelectNodes\"}", id: 2))
        let deadline = clock.now.advanced(by: .seconds(1))
        let first = try await stomp.next(until: deadline)
        let second = try await stomp.next(until: deadline)
        #expect(GCCSStatus(messageBody: first.frame.body) == .createChannel)
        #expect(GCCSStatus(messageBody: second.frame.body) == .selectNodes)
        #expect(second.frame.headers["message-id"] == "2")
    }

    @Test("a frame split over three WebSocket messages is put back together, heart-beats between frames skipped")
    func splitFrame() async throws {
        let socket = ScriptedSocket(clock: clock)
        var stomp = StompClient(socket: socket, clock: clock)
        let whole = message("{\"status\":\"StartVerificationOfNodes\"}")
        let bytes = Array(whole.utf8)
        socket.arrive("\n")
        socket.arrive(String(decoding: bytes[..<10], as: UTF8.self), after: .milliseconds(1))
        socket.arrive(String(decoding: bytes[10..<40], as: UTF8.self), after: .milliseconds(2))
        socket.arrive(String(decoding: bytes[40...], as: UTF8.self), after: .milliseconds(3))
        let received = try await stomp.next(until: clock.now.advanced(by: .seconds(1)))
        #expect(GCCSStatus(messageBody: received.frame.body) == .startVerificationOfNodes)
        #expect(received.arrived == ManualClock.Instant(offset: .milliseconds(3)))
    }

    @Test("a message that waited in the queue is dated when it arrived, not when it was read")
    func arrivalInstant() async throws {
        let socket = ScriptedSocket(clock: clock)
        var stomp = StompClient(socket: socket, clock: clock)
        socket.arrive(message("{\"status\":\"CreateChannel\"}"), after: .milliseconds(200))
        clock.advance(by: .milliseconds(500)) // the flow was busy with a REST call meanwhile
        let received = try await stomp.next(until: clock.now.advanced(by: .seconds(1)))
        #expect(received.arrived == ManualClock.Instant(offset: .milliseconds(200)))
    }

    @Test("an ERROR frame is thrown with its message header")
    func errorFrame() async throws {
        let socket = ScriptedSocket(clock: clock)
        var stomp = StompClient(socket: socket, clock: clock)
        socket.arrive("ERROR\nmessage:internal server error\ncontent-type:text/plain\n\nboom\0")
        await #expect(throws: StompClientError.serverError("internal server error")) {
            _ = try await stomp.next(until: clock.now.advanced(by: .seconds(1)))
        }
        #expect(StompClientError.serverError("x").outcome == Outcome(.protocolError, "STOMP ERROR: x"))
    }

    @Test("bytes that are not STOMP are a malformed-frame error, not a crash")
    func malformed() async throws {
        let socket = ScriptedSocket(clock: clock)
        var stomp = StompClient(socket: socket, clock: clock)
        socket.arrive("HELLO\n\n\0")
        do {
            _ = try await stomp.next(until: clock.now.advanced(by: .seconds(1)))
            Issue.record("expected a malformed-frame error")
        } catch {
            guard case .malformed = error else {
                Issue.record("got \(error)")
                return
            }
            #expect(error.outcome.kind == .protocolError)
        }
    }

    @Test("nothing before the deadline is a timeout at exactly the deadline")
    func timeout() async throws {
        let socket = ScriptedSocket(clock: clock)
        var stomp = StompClient(socket: socket, clock: clock)
        let deadline = clock.now.advanced(by: .seconds(3))
        await #expect(throws: StompClientError.timeout) { _ = try await stomp.next(until: deadline) }
        #expect(clock.now == deadline)
    }

    @Test("a socket the server closes with 1011 ends the session with that code")
    func serverClose() async throws {
        let socket = ScriptedSocket(clock: clock)
        var stomp = StompClient(socket: socket, clock: clock)
        socket.serverCloses(1011, after: .milliseconds(50))
        await #expect(throws: StompClientError.closed(WebSocketClosed(code: 1011))) {
            _ = try await stomp.next(until: clock.now.advanced(by: .seconds(1)))
        }
        #expect(StompClientError.closed(WebSocketClosed(code: 1011)).outcome == Outcome(.transportError, "websocket closed 1011"))
    }

    @Test("SUBSCRIBE with a receipt waits for it; a MESSAGE that came first stays queued")
    func subscribeReceipt() async throws {
        let socket = ScriptedSocket(clock: clock) { text in
            text.hasPrefix("SUBSCRIBE") ? [message("{\"status\":\"CreateChannel\"}"), "RECEIPT\nreceipt-id:r-1\n\n\0"] : []
        }
        var stomp = StompClient(socket: socket, clock: clock)
        try await stomp.subscribe(destination: "/user/queue", id: "/user/queue", receipt: true, until: clock.now.advanced(by: .seconds(1)))
        #expect(socket.sentTexts == ["SUBSCRIBE\ndestination:/user/queue\nid:/user/queue\nack:auto\nreceipt:r-1\n\n\0"])
        let queued = try await stomp.next(until: clock.now.advanced(by: .seconds(1)))
        #expect(GCCSStatus(messageBody: queued.frame.body) == .createChannel)
    }

    @Test("heart-beats: the client sends a bare EOL every negotiated interval while it waits")
    func sendsHeartBeats() async throws {
        // Client offers 1000,0; server answers 0,2000 → client→server every max(1000, 2000) = 2000 ms.
        let socket = ScriptedSocket(clock: clock) { text in
            text.hasPrefix("CONNECT") ? ["CONNECTED\nversion:1.2\nheart-beat:0,2000\n\n\0"] : []
        }
        var stomp = StompClient(socket: socket, clock: clock)
        try await stomp.connect(.connect(heartBeat: StompHeartBeat(send: 1000, receive: 0)), until: clock.now.advanced(by: .seconds(1)))
        #expect(stomp.heartBeat.clientToServer == .milliseconds(2000))
        await #expect(throws: StompClientError.timeout) { _ = try await stomp.next(until: clock.now.advanced(by: .milliseconds(6500))) }
        #expect(socket.sentTexts.filter { $0 == "\n" }.count == 3)
    }

    @Test("heart-beats: a server silent for twice its interval is given up on")
    func missedHeartBeats() async throws {
        // Client wants beats every 500 ms (0,500); server offers 1000,0 → server→client every 1000 ms.
        let socket = ScriptedSocket(clock: clock) { text in
            text.hasPrefix("CONNECT") ? ["CONNECTED\nversion:1.2\nheart-beat:1000,0\n\n\0"] : []
        }
        var stomp = StompClient(socket: socket, clock: clock)
        try await stomp.connect(.connect(heartBeat: StompHeartBeat(send: 0, receive: 500)), until: clock.now.advanced(by: .seconds(1)))
        let start = clock.now
        socket.arrive("\n", after: .milliseconds(1500)) // one beat, then silence
        await #expect(throws: StompClientError.heartBeatMissed) { _ = try await stomp.next(until: start.advanced(by: .seconds(30))) }
        #expect(clock.now == start.advanced(by: .milliseconds(3500)))
    }

    @Test("DISCONNECT asks for a receipt, waits for it, hands back late frames and closes with 1000")
    func disconnect() async throws {
        let socket = ScriptedSocket(clock: clock) { text in
            text.hasPrefix("DISCONNECT") ? [message("{\"status\":\"AuthCanceled\"}"), "RECEIPT\nreceipt-id:r-1\n\n\0"] : []
        }
        var stomp = StompClient(socket: socket, clock: clock)
        let (late, error) = await stomp.disconnect(until: clock.now.advanced(by: .seconds(1)))
        #expect(error == nil)
        #expect(late.map { GCCSStatus(messageBody: $0.body) } == [.authCanceled])
        #expect(socket.sentTexts == ["DISCONNECT\nreceipt:r-1\n\n\0"])
        #expect(socket.closedByClient == 1000)
    }
}
