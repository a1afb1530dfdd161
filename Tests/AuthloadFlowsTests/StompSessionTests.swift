import AuthloadCore
import AuthloadTesting
import AuthloadWire
import Testing

@testable import AuthloadFlows

private typealias Instant = VirtualInstant

private func at(_ milliseconds: Int) -> Instant { Instant(offset: .milliseconds(milliseconds)) }

private func message(_ body: String, id: Int = 1) -> String {
    "MESSAGE\ndestination:/user/queue\nsubscription:/user/queue\nmessage-id:\(id)\n\n\(body)\0"
}

private func text(_ text: String, queued: Duration = .zero) -> ReceivedWebSocketMessage {
    ReceivedWebSocketMessage(.text(text), queued: queued)
}

/// A session whose CONNECT offered `offered` and whose server answered `answered`, at instant zero.
private func connected(offered: StompHeartBeat, answered: String) -> StompSession<Instant> {
    var session = StompSession(now: at(0))
    session.connected(offered: offered, reply: StompFrame(command: .connected, headers: ["version": "1.2", "heart-beat": answered]))
    return session
}

@Suite("STOMP session as a state machine, on bytes and instants")
struct StompSessionTests {
    @Test("frames come out in order, dated when their message arrived; one split over messages is joined")
    func framesInOrder() throws {
        var session = StompSession(now: at(0))
        let split = Array(message("{\"status\":\"SelectNodes\"}", id: 2).utf8)
        try session.take(
            text(message("{\"status\":\"CreateChannel\"}") + "\n" + String(decoding: split[..<12], as: UTF8.self)), now: at(100))
        let first = try #require(try session.nextFrame())
        #expect(GCCSStatus(messageBody: first.frame.body) == .createChannel)
        #expect(first.arrived == at(100))
        #expect(try session.nextFrame() == nil)
        // The rest waited 30 ms in the queue before the session read it.
        try session.take(text(String(decoding: split[12...], as: UTF8.self), queued: .milliseconds(30)), now: at(250))
        let second = try #require(try session.nextFrame())
        #expect(second.frame.headers["message-id"] == "2")
        #expect(second.arrived == at(220))
    }

    @Test("an ERROR frame is thrown with its message header; bytes that are not STOMP are malformed")
    func errors() throws {
        var session = StompSession(now: at(0))
        try session.take(text("ERROR\nmessage:boom\n\n\0"), now: at(1))
        #expect(throws: StompClientError.serverError("boom")) { _ = try session.nextFrame() }
        var other = StompSession(now: at(0))
        do {
            try other.take(text("HELLO\n\n\0"), now: at(1))
            Issue.record("expected a malformed-frame error")
        } catch {
            guard case .malformed = error else {
                Issue.record("got \(error)")
                return
            }
        }
    }

    @Test("a receipt is taken out of the queue with the frames before it, which stay queued")
    func receipt() throws {
        var session = StompSession(now: at(0))
        let id = session.nextReceiptID()
        #expect(id == "r-1" && session.nextReceiptID() == "r-2")
        #expect(try session.takeReceipt(id) == nil)
        try session.take(text(message("{\"status\":\"CreateChannel\"}") + "RECEIPT\nreceipt-id:r-1\n\n\0"), now: at(5))
        let before = try #require(try session.takeReceipt(id))
        #expect(before.map(\.command) == [.message])
        #expect(try session.nextFrame()?.frame.command == .message)
        #expect(try session.nextFrame() == nil)
    }

    @Test("a receipt found first or among several queued frames leaves the others queued in order; an ERROR before it throws")
    func receiptAmongFrames() throws {
        var session = StompSession(now: at(0))
        try session.take(text("RECEIPT\nreceipt-id:r-1\n\n\0" + message("{}", id: 1)), now: at(1))
        #expect(try session.takeReceipt("r-1") == [])
        #expect(try session.nextFrame()?.frame.headers["message-id"] == "1")
        #expect(try session.nextFrame() == nil)

        let queued = message("{}", id: 2) + message("{}", id: 3) + "RECEIPT\nreceipt-id:r-2\n\n\0" + message("{}", id: 4)
        try session.take(text(queued), now: at(2))
        #expect(try session.takeReceipt("r-3") == nil)
        let before = try #require(try session.takeReceipt("r-2"))
        #expect(before.map { $0.headers["message-id"] } == ["2", "3"])
        for id in ["2", "3", "4"] { #expect(try session.nextFrame()?.frame.headers["message-id"] == id) }
        #expect(try session.nextFrame() == nil)

        try session.take(text(message("{}", id: 5) + "ERROR\nmessage:boom\n\n\0" + "RECEIPT\nreceipt-id:r-4\n\n\0"), now: at(3))
        #expect(throws: StompClientError.serverError("boom")) { _ = try session.takeReceipt("r-4") }
    }

    @Test("without heart-beats it waits until the deadline, then times out exactly there")
    func deadline() {
        let session = StompSession(now: at(0))
        #expect(session.nextWait(until: at(3000), now: at(1000)) == .wait(.seconds(2)))
        #expect(session.nextWait(until: at(3000), now: at(3000)) == .fail(.timeout))
    }

    @Test("a client silent for its interval sends a heart-beat; the wait ends at the next one due")
    func clientHeartBeats() {
        // Client offers 1000,0; server answers 0,2000: client→server every 2000 ms.
        var session = connected(offered: StompHeartBeat(send: 1000, receive: 0), answered: "0,2000")
        #expect(session.nextWait(until: at(10_000), now: at(500)) == .wait(.milliseconds(1500)))
        #expect(session.nextWait(until: at(10_000), now: at(2000)) == .sendHeartBeat)
        session.sent(at: at(2000))
        #expect(session.nextWait(until: at(10_000), now: at(2000)) == .wait(.seconds(2)))
        #expect(session.nextWait(until: at(3000), now: at(2000)) == .wait(.seconds(1)))
    }

    @Test("a server silent for twice its interval is given up on; anything it sends counts as heard")
    func serverHeartBeats() throws {
        // Client wants beats every 500 ms (0,500); server offers 1000,0: server→client every 1000 ms.
        var session = connected(offered: StompHeartBeat(send: 0, receive: 500), answered: "1000,0")
        #expect(session.nextWait(until: at(30_000), now: at(0)) == .wait(.seconds(2)))
        try session.take(text("\n"), now: at(1500))
        #expect(try session.nextFrame() == nil)
        #expect(session.nextWait(until: at(30_000), now: at(3499)) == .wait(.milliseconds(1)))
        #expect(session.nextWait(until: at(30_000), now: at(3500)) == .fail(.heartBeatMissed))
    }
}

extension StompClient {
    /// The follower's whole wait, as ``GCCSIteration`` runs it.
    fileprivate mutating func follow(until deadline: C.Instant, _ handle: @escaping (Received) -> Outcome?) async throws(StompClientError)
        -> Outcome
    {
        let follower = follower(until: deadline, handle)
        var failure: (any Error)?
        do {
            try await socket.consume(follower)
        } catch {
            failure = error
        }
        return try followed(follower, failure: failure)
    }
}

@Suite("STOMP follower, as a socket's loop drives it")
struct StompFollowerTests {
    let clock = ManualClock()

    /// A follower at the clock's start that ends on `SelectNodes` and notes every status it is handed.
    private func follower(
        _ session: StompSession<ManualClock.Instant>, deadline: Duration = .seconds(10), seen: Locked<[GCCSStatus]>
    ) -> StompFollower<ManualClock> {
        StompFollower(session: session, clock: clock, deadline: clock.now.advanced(by: deadline)) { received in
            guard let status = GCCSStatus(messageBody: received.frame.body) else { return Outcome(.protocolError, "no status") }
            seen.withLock { $0.append(status) }
            return status == .selectNodes ? .ok : nil
        }
    }

    @Test("hands each frame over until the flow has its result, then finishes with it")
    func handsOverFrames() throws {
        let seen = Locked<[GCCSStatus]>([])
        let follower = follower(StompSession(now: clock.now), seen: seen)
        #expect(follower.next(after: nil) == .wait(.seconds(10)))
        clock.advance(by: .seconds(1))
        #expect(follower.next(after: text(message("{\"status\":\"CreateChannel\"}"))) == .wait(.seconds(9)))
        clock.advance(by: .seconds(1))
        let two = message("{\"status\":\"SelectNodes\"}", id: 2) + message("{\"status\":\"StartVerificationOfNodes\"}", id: 3)
        #expect(follower.next(after: text(two)) == .finish)
        #expect(try follower.result.get() == .ok)
        #expect(seen.withLock { $0 } == [.createChannel, .selectNodes])
        // The frame after the result stays in the session for the flow's next wait.
        var session = follower.session
        #expect(try session.nextFrame().flatMap { GCCSStatus(messageBody: $0.frame.body) } == .startVerificationOfNodes)
    }

    @Test("asks to send a heart-beat when one is due, and times out at the deadline")
    func heartBeatAndTimeout() {
        var session = StompSession<ManualClock.Instant>(now: clock.now)
        session.connected(
            offered: StompHeartBeat(send: 1000, receive: 0),
            reply: StompFrame(command: .connected, headers: ["version": "1.2", "heart-beat": "0,1000"]))
        let follower = follower(session, deadline: .milliseconds(2500), seen: Locked([]))
        #expect(follower.next(after: nil) == .wait(.seconds(1)))
        clock.advance(by: .seconds(1))
        #expect(follower.next(after: nil) == .send(.text("\n")))
        #expect(follower.next(after: nil) == .wait(.seconds(1)))
        clock.advance(by: .milliseconds(1500))
        #expect(follower.next(after: nil) == .send(.text("\n")))
        #expect(follower.next(after: nil) == .finish)
        #expect(follower.result == .failure(.timeout))
    }

    @Test("an ERROR frame or a malformed one ends the wait with that error")
    func errorsEnd() {
        let failing = follower(StompSession(now: clock.now), seen: Locked([]))
        #expect(failing.next(after: text("ERROR\nmessage:gone\n\n\0")) == .finish)
        #expect(failing.result == .failure(.serverError("gone")))
        let malformed = follower(StompSession(now: clock.now), seen: Locked([]))
        #expect(malformed.next(after: text("HELLO\n\n\0")) == .finish)
        guard case .failure(.malformed) = malformed.result else {
            Issue.record("got \(malformed.result)")
            return
        }
    }

    @Test("over a socket that receives message by message, follow gives the result and keeps later frames")
    func followOverScriptedSocket() async throws {
        let socket = ScriptedSocket(clock: clock)
        var stomp = StompClient(socket: socket, clock: clock)
        socket.arrive(message("{\"status\":\"CreateChannel\"}"), after: .seconds(1))
        socket.arrive(
            message("{\"status\":\"SelectNodes\"}", id: 2) + message("{\"status\":\"StartVerificationOfNodes\"}", id: 3), after: .seconds(2)
        )
        let seen = Locked<[C]>([])
        let outcome = try await stomp.follow(until: clock.now.advanced(by: .seconds(5))) { received in
            seen.withLock { $0.append(received.arrived) }
            return GCCSStatus(messageBody: received.frame.body) == .selectNodes ? .ok : nil
        }
        #expect(outcome == .ok)
        #expect(seen.withLock { $0 } == [ManualClock.Instant(offset: .seconds(1)), ManualClock.Instant(offset: .seconds(2))])
        let later = try await stomp.next(until: clock.now.advanced(by: .seconds(1)))
        #expect(GCCSStatus(messageBody: later.frame.body) == .startVerificationOfNodes)
        let deadline = clock.now.advanced(by: .seconds(3))
        await #expect(throws: StompClientError.timeout) { _ = try await stomp.follow(until: deadline) { _ in nil } }
        #expect(clock.now == deadline)
    }

    private typealias C = ManualClock.Instant
}
