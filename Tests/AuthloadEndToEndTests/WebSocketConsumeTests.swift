import AuthloadCore
import AuthloadTransport
import Testing

/// Sends `toSend` one by one, then waits for `expected` messages, noting each and each wait that ended without one;
/// gives up after more than `emptyTurns` of those. Says on `waiting` each time it asks for a wait.
private final class EchoConsumer: WebSocketMessageConsumer {
    struct State {
        var toSend: [String]
        var heard: [WebSocketMessage] = []
        var empty = 0
        var waited = false
    }

    let state: Locked<State>
    let expected: Int
    let wait: Duration
    let emptyTurns: Int
    let (waiting, waits) = AsyncStream<Void>.makeStream()

    init(send: [String], expecting expected: Int, wait: Duration = .seconds(5), emptyTurns: Int = 0) {
        state = Locked(State(toSend: send))
        self.expected = expected
        self.wait = wait
        self.emptyTurns = emptyTurns
    }

    func next(after received: ReceivedWebSocketMessage?) -> WebSocketConsumerStep {
        let step = state.withLock { state -> WebSocketConsumerStep in
            if let received {
                state.heard.append(received.message)
            } else if state.waited {
                state.empty += 1
            }
            state.waited = false
            if !state.toSend.isEmpty { return .send(.text(state.toSend.removeFirst())) }
            if state.heard.count == expected || state.empty > emptyTurns { return .finish }
            state.waited = true
            return .wait(wait)
        }
        if case .wait = step { waits.yield() }
        return step
    }
}

@Suite("A consumer run on the WebSocket's loop", .timeLimit(.minutes(1)))
struct WebSocketConsumeTests {
    @Test("hears a message queued before it, sends what it asks and hears the echoes in order, in one wait")
    func echoes() async throws {
        try await WebSocketFixture.with { fixture in
            let socket = try await fixture.open()
            try await socket.send(.text("zero"))
            try await socket.send(.text("one"))
            // "one" comes back behind "zero": by now it is on its way or already queued.
            #expect(try await socket.receive(timeout: .seconds(5)) == .text("zero"))
            let consumer = EchoConsumer(send: ["two", "three"], expecting: 3)
            try await socket.consume(consumer)
            #expect(consumer.state.withLock { $0.heard } == [.text("one"), .text("two"), .text("three")])
            // The socket is still open and serves plain receives afterwards.
            try await socket.send(.text("after"))
            #expect(try await socket.receive(timeout: .seconds(5)) == .text("after"))
        }
    }

    @Test("a wait that ends without a message is a turn of its own; the consumer decides to stop")
    func emptyTurns() async throws {
        try await WebSocketFixture.with { fixture in
            let socket = try await fixture.open()
            let consumer = EchoConsumer(send: [], expecting: 1, wait: .milliseconds(20), emptyTurns: 3)
            try await socket.consume(consumer)
            // Three waits that timed out, then the fourth, after which it gave up.
            #expect(consumer.state.withLock { $0.heard }.isEmpty)
            #expect(consumer.state.withLock { $0.empty } == 4)
        }
    }

    @Test("the server's Close ends the wait with its code, after the messages before it")
    func serverClose() async throws {
        try await WebSocketFixture.with { fixture in
            let socket = try await fixture.open()
            let consumer = EchoConsumer(send: ["close 1011"], expecting: 5)
            await #expect(throws: WebSocketClosed(code: 1011, reason: "boom")) { try await socket.consume(consumer) }
            #expect(consumer.state.withLock { $0.heard } == [.text("bye")])
        }
    }

    @Test("cancelling the waiting task ends the wait with CancellationError and leaves the socket usable")
    func cancel() async throws {
        try await WebSocketFixture.with { fixture in
            let socket = try await fixture.open()
            let consumer = EchoConsumer(send: [], expecting: 1, wait: .seconds(30))
            let waiting = Task { try await socket.consume(consumer) }
            // Once the consumer has asked for its long wait, the task is suspended in it.
            for await _ in consumer.waiting { break }
            waiting.cancel()
            await #expect(throws: CancellationError.self) { try await waiting.value }
            try await socket.send(.text("still here"))
            #expect(try await socket.receive(timeout: .seconds(5)) == .text("still here"))
        }
    }

    /// Starts `consumption` and waits for its `done`, counting its calls in `calls`.
    func outcome(of consumption: any WebSocketConsumption, calls: Locked<Int>) async -> Result<Void, any Error> {
        await withCheckedContinuation { continuation in
            consumption.start { result in
                calls.withLock { $0 += 1 }
                continuation.resume(returning: result)
            }
        }
    }

    @Test("a consumption runs the consumer on the loop with no task waiting, and says once when it is done")
    func consumption() async throws {
        try await WebSocketFixture.with { fixture in
            let socket = try await fixture.open()
            let consumer = EchoConsumer(send: ["two", "three"], expecting: 2)
            let running = try #require(socket.consumption(of: consumer))
            let calls = Locked(0)
            let result = await outcome(of: running, calls: calls)
            #expect((try? result.get()) != nil)
            #expect(consumer.state.withLock { $0.heard } == [.text("two"), .text("three")])
            // Stopping it once done changes nothing; the socket serves plain receives.
            running.stop(CancellationError())
            try await socket.send(.text("after"))
            #expect(try await socket.receive(timeout: .seconds(5)) == .text("after"))
            #expect(calls.withLock { $0 } == 1)
        }
    }

    @Test("a consumption stopped while it waits, or before it starts, ends with the error and leaves the socket usable")
    func stopConsumption() async throws {
        try await WebSocketFixture.with { fixture in
            let socket = try await fixture.open()
            let consumer = EchoConsumer(send: [], expecting: 1, wait: .seconds(30))
            let running = try #require(socket.consumption(of: consumer))
            let calls = Locked(0)
            let result = Task { await outcome(of: running, calls: calls) }
            for await _ in consumer.waiting { break }
            running.stop(WebSocketClosed(code: 4000))
            await #expect(throws: WebSocketClosed(code: 4000)) { try await result.value.get() }

            let early = try #require(socket.consumption(of: EchoConsumer(send: ["unsent"], expecting: 1)))
            early.stop(CancellationError())
            await #expect(throws: CancellationError.self) { try await outcome(of: early, calls: calls).get() }
            #expect(calls.withLock { $0 } == 2)
            try await socket.send(.text("still here"))
            #expect(try await socket.receive(timeout: .seconds(5)) == .text("still here"))
        }
    }
}
