import AuthloadCore
import AuthloadSimulation
import Testing

/// The simulation's in-process WebSocket running a consumer where the service sends, as a socket's loop does.
@Suite("Simulated WebSocket consumers", .timeLimit(.minutes(1)))
struct SimulatedWebSocketTests {
    /// A service whose socket pushes `pushes` (text at an offset from the upgrade), answers `ping` with `pong` inside
    /// the send, and closes with 1011 on `bye`.
    private struct PacedService: HTTPService, WebSocketService {
        let pushes: [(Duration, String)]

        func respond(to request: HTTPRequest) -> ServiceReply { ServiceReply(HTTPResponse(status: 404)) }

        func upgrade(_ request: HTTPRequest, offeredProtocols: [String], peer: any WebSocketPeer) -> WebSocketUpgrade {
            for (delay, text) in pushes { peer.schedule(after: delay) { peer.send(.text(text)) } }
            return .accept(handler: Session(peer: peer), subprotocol: nil)
        }

        struct Session: WebSocketSessionHandler {
            let peer: any WebSocketPeer

            func received(_ message: WebSocketMessage) {
                switch message {
                case .text("ping"): peer.send(.text("pong"))
                case .text("bye"): peer.close(code: 1011, reason: "asked to")
                default: break
                }
            }

            func closed(code: Int) {}
        }
    }

    /// Answers each turn from `script` in order (then finishes), logging what it was handed and when.
    private final class ScriptedConsumer: WebSocketMessageConsumer, @unchecked Sendable {
        // Unchecked Sendable: the simulation runs everything on its one thread.
        let clock: SimulationClock
        var script: [WebSocketConsumerStep]
        var log: [String] = []

        init(clock: SimulationClock, script: [WebSocketConsumerStep]) {
            self.clock = clock
            self.script = script
        }

        func next(after received: ReceivedWebSocketMessage?) -> WebSocketConsumerStep {
            switch received?.message {
            case .text(let text)?: log.append("\(text) at \(clock.now) queued \(received!.queued)")
            case .binary?: log.append("binary")
            case nil: log.append("nothing at \(clock.now)")
            }
            return script.isEmpty ? .finish : script.removeFirst()
        }
    }

    /// `body` on a simulation, its error as a failed expectation and an empty result.
    private func simulate<T: Sendable>(_ empty: T, _ body: @escaping @Sendable (SimulationClock, SimulationExecutor) async throws -> T)
        async -> T
    {
        let clock = SimulationClock()
        let executor = SimulationExecutor()
        let outcome = await executor.run(clock: clock) { () async -> Result<T, any Error> in
            do {
                return .success(try await body(clock, executor))
            } catch {
                return .failure(error)
            }
        }
        switch outcome {
        case .success(let value): return value
        case .failure(let error):
            Issue.record(error)
            return empty
        }
    }

    private func open(_ service: PacedService, clock: SimulationClock, executor: SimulationExecutor) async throws -> any WebSocketConnection
    {
        let transport = SimulationTransport(clock: clock, executor: executor, service: service)
        let client = transport.makeClient(for: Endpoint(host: "127.0.0.1", port: 80))
        return try await client.openWebSocket(HTTPRequest(method: "GET", target: "/ws"), protocols: [], timeout: .seconds(1))
    }

    @Test("A held consumer hears each push at its instant, and a reply to its own send at its next wait, not inside it")
    func heldConsumer() async {
        let service = PacedService(pushes: [(.seconds(1), "a"), (.seconds(2), "b")])
        let (log, result) = await simulate(([String](), "")) { clock, executor in
            let socket = try await open(service, clock: clock, executor: executor)
            let consumer = ScriptedConsumer(
                clock: clock, script: [.wait(.seconds(10)), .send(.text("ping")), .wait(.seconds(10)), .wait(.seconds(10)), .finish])
            let consumption = try #require(socket.consumption(of: consumer))
            let ended = Locked<String?>(nil)
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                consumption.start { result in
                    ended.withLock { $0 = "\(result)" }
                    continuation.resume()
                }
            }
            return (consumer.log, ended.withLock { $0 } ?? "")
        }
        #expect(
            log == [
                "nothing at t+0s", "a at t+1s queued 0.0 seconds", "nothing at t+1s", "pong at t+1s queued 0.0 seconds",
                "b at t+2s queued 0.0 seconds"
            ])
        #expect(result == "success()")
    }

    @Test("A wait with nothing sent ends at its timeout, and messages queued before the start come first, with their age")
    func timeoutAndQueued() async {
        let service = PacedService(pushes: [(.seconds(1), "early")])
        let log = await simulate([String]()) { clock, executor in
            let socket = try await open(service, clock: clock, executor: executor)
            try await clock.sleep(until: .init(offset: .seconds(3)))
            let consumer = ScriptedConsumer(clock: clock, script: [.wait(.seconds(1)), .wait(.seconds(5)), .finish])
            try await socket.consume(consumer)
            return consumer.log
        }
        #expect(log == ["nothing at t+3s", "early at t+3s queued 2.0 seconds", "nothing at t+8s"])
    }

    @Test("The server's close ends a consumer with it; a stop before the start ends the start at once")
    func closeAndStop() async {
        let service = PacedService(pushes: [])
        let (closed, stopped, afterStop) = await simulate(("", "", [String]())) { clock, executor in
            let socket = try await open(service, clock: clock, executor: executor)
            let consumer = ScriptedConsumer(clock: clock, script: [.send(.text("bye")), .wait(.seconds(5))])
            var closed = ""
            do {
                try await socket.consume(consumer)
            } catch let error as WebSocketClosed {
                closed = "closed \(error.code) at \(clock.now)"
            }
            let other = try await open(service, clock: clock, executor: executor)
            let idle = ScriptedConsumer(clock: clock, script: [.wait(.seconds(5))])
            let consumption = try #require(other.consumption(of: idle))
            consumption.stop(CancellationError())
            let ended = Locked<String>("")
            consumption.start { result in
                if case .failure(let error) = result { ended.withLock { $0 = "\(type(of: error))" } }
            }
            return (closed, ended.withLock { $0 }, idle.log)
        }
        #expect(closed == "closed 1011 at t+0s")
        #expect(stopped == "CancellationError")
        #expect(afterStop.isEmpty, "a consumer stopped before its start is never asked")
    }
}
