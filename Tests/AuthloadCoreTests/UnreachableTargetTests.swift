import AuthloadCore
import AuthloadTesting
import Testing

/// A transport whose connections are refused until `opensAt`, then answered 200 after `latency`: a closed port
/// (for ever, by default), or a target that comes back.
private struct RefusingTransport: Transport {
    let clock: ManualClock
    var opensAt: ManualClock.Instant?
    var latency = Duration.milliseconds(100)

    func makeClient(for endpoint: Endpoint) -> any HTTPClient { Client(transport: self) }

    private struct Client: HTTPClient {
        let transport: RefusingTransport

        func execute(_ request: HTTPRequest, timeout: Duration, isolation: isolated (any Actor)?) async throws -> HTTPResponse {
            guard let opensAt = transport.opensAt, transport.clock.now >= opensAt else {
                // As the socket transport reports ECONNREFUSED from connect(2): at once.
                throw TransportError(.connectionRefused, "connect")
            }
            try await transport.clock.sleep(until: transport.clock.now.advanced(by: transport.latency), tolerance: nil)
            return HTTPResponse(status: 200)
        }

        func openWebSocket(_ request: HTTPRequest, protocols: [String], timeout: Duration) async throws -> any WebSocketConnection {
            throw TransportError(.connectionRefused, "connect")
        }

        func shutdown() {}
    }
}

@Suite("An unreachable target: backoff and the unreachable verdict, on a manual clock", .timeLimit(.minutes(1)))
struct UnreachableTargetTests {
    let clock = ManualClock()
    let endpoint = Endpoint(host: "127.0.0.1", port: 1)

    func plan(users: Int = 10, duration: Duration, unreachableAfter: Duration? = .seconds(30)) -> RunPlan {
        var plan = RunPlan.closed(users: users, duration: duration, think: .zero)
        plan.generator.unreachableAfter = unreachableAfter
        return plan
    }

    @Test("the backoff doubles from 100 ms to a 5 s cap, jittered between half and all of it, and is 0 with no failure")
    func backoffDelays() {
        var random = SplitMix64(seed: 42)
        #expect(ConnectionBackoff.delay(afterFailures: 0, using: &random) == .zero)
        let ceilings: [Duration] =
            [.milliseconds(100), .milliseconds(200), .milliseconds(400), .milliseconds(800), .milliseconds(1_600)]
            + [.milliseconds(3_200), .seconds(5), .seconds(5), .seconds(5)]
        for (failures, ceiling) in zip(1..., ceilings) {
            var draws = Set<Duration>()
            for _ in 0..<200 {
                let delay = ConnectionBackoff.delay(afterFailures: failures, using: &random)
                #expect(delay >= ceiling / 2 && delay <= ceiling, "after \(failures) failures: \(delay)")
                draws.insert(delay)
            }
            #expect(draws.count > 100, "jittered: users that failed together do not retry together")
        }
        #expect(ConnectionBackoff.delay(afterFailures: Int.max, using: &random) <= .seconds(5))
    }

    @Test("ten users with no think time against a refused port back off instead of spinning")
    func usersBackOff() async throws {
        // Past 5 s the run has said all it can; unreachableAfter off keeps it going for the count.
        let runner = Runner(
            plan: plan(duration: .seconds(5), unreachableAfter: nil), flows: [PingFlow()],
            transport: RefusingTransport(clock: clock), endpoint: endpoint, clock: clock)
        let outcome = await clock.drive(runner.control) { await runner.run() }
        // Each user: 0.1 + 0.2 + 0.4 + 0.8 + 1.6 + 3.2 s at most, half of each at least: 6 to 9 flows in 5 s.
        #expect(outcome.iterations >= 10 * 5 && outcome.iterations <= 10 * 10, "\(outcome.iterations) flows")
        let flow = try #require(outcome.measured.metrics.first { $0.id.step == nil })
        #expect(flow.errors == flow.count)
        #expect(
            outcome.measured.errors.first { $0.id == MetricID(flow: "ping", step: "first") }
                == ErrorCount(
                    id: MetricID(flow: "ping", step: "first"), kind: .transportError, detail: "connection refused", count: flow.count))
        #expect(outcome.unreachable == nil && !outcome.stoppedEarly)
        // The progress line's share: every attempt failed, though no HTTP request was ever sent.
        let live = runner.collector.live
        #expect(live.totalRequests == 0 && live.totalAttempts > 0 && live.totalErrors == live.totalAttempts)
    }

    @Test("the first flow that gets through resets a user's backoff")
    func successResetsBackoff() async throws {
        // Refused for 3 s (each user is then 1.6–3.2 s into its backoff), then answered in 100 ms.
        let transport = RefusingTransport(clock: clock, opensAt: clock.now.advanced(by: .seconds(3)))
        let runner = Runner(
            plan: plan(users: 1, duration: .seconds(20)), flows: [PingFlow()], transport: transport, endpoint: endpoint, clock: clock)
        let outcome = await clock.drive(runner.control) { await runner.run() }
        let flow = try #require(outcome.measured.metrics.first { $0.id.step == nil })
        // At most 6 refused flows before 6.3 s (the last backoff ends by then); then 200 ms flows back to back until
        // 20 s. Without the reset a user would keep waiting 5 s between flows: 3 more at most.
        #expect(flow.errors <= 6)
        #expect(flow.count - flow.errors >= 65, "\(flow.count - flow.errors) flows succeeded")
        #expect(outcome.unreachable == nil)
    }

    @Test("a run in which nothing succeeds for unreachableAfter while connections are refused stops, naming the cause")
    func unreachableVerdict() async throws {
        let runner = Runner(
            plan: plan(duration: .seconds(600)), flows: [PingFlow()], transport: RefusingTransport(clock: clock), endpoint: endpoint,
            clock: clock)
        let outcome = await clock.drive(runner.control) { await runner.run() }
        let verdict = try #require(outcome.unreachable)
        #expect(verdict.cause == "connection refused")
        #expect(verdict.span == .seconds(30))
        #expect(verdict.line(target: "http://127.0.0.1:1") == "http://127.0.0.1:1: connection refused, 0 successes in 30 s")
        // Stopped at the verdict, not at the planned 10 minutes; not a signal's interruption.
        #expect(outcome.elapsed >= .seconds(30) && outcome.elapsed < .seconds(36), "\(outcome.elapsed)")
        #expect(!outcome.stoppedEarly && outcome.abortedBy == nil)
    }

    @Test("the verdict waits for unreachableAfter from the last success, and a server that answers errors is reachable")
    func reachabilityStateMachine() {
        let refused = Outcome(TransportError(.refused, "connect"))
        var reachability = Reachability(limit: .seconds(30))
        reachability.observe(successes: 0, failures: [refused: 50], at: .seconds(29))
        #expect(reachability.verdict(at: .seconds(29)) == nil)
        #expect(reachability.verdict(at: .seconds(30)) == UnreachableVerdict(cause: "connection refused", attempts: 50, span: .seconds(30)))
        // One success starts the wait over.
        reachability.observe(successes: 1, failures: [refused: 3], at: .seconds(31))
        #expect(reachability.verdict(at: .seconds(60)) == nil)
        #expect(reachability.verdict(at: .seconds(61))?.attempts == 3)

        // Every request answered 503: no success, but the target is there.
        var answering = Reachability(limit: .seconds(30))
        answering.observe(successes: 0, failures: [Outcome(.httpError, "503"): 400, refused: 2], at: .seconds(40))
        #expect(answering.verdict(at: .seconds(40)) == nil)

        // Off: never a verdict.
        var off = Reachability(limit: nil)
        off.observe(successes: 0, failures: [refused: 1_000], at: .seconds(3_600))
        #expect(off.verdict(at: .seconds(3_600)) == nil)
    }

    @Test("refused, unroutable, unresolved and TLS handshake failures are connection failures; resets and timeouts are not")
    func connectionFailures() {
        let yes = [
            TransportError(.connectionRefused, "connect"), TransportError(.nameResolution, "no.such.host"),
            TransportError(.connectTimeout, TransportError.unansweredConnectDetail),
            TransportError(.timedOut(.tlsHandshake), "TLS handshake"),
            TransportError(.unreachable, "connect: ENETUNREACH (Network is unreachable)"),
            TransportError(.tls, "certificate verify failed: self-signed certificate")
        ]
        for error in yes { #expect(Outcome(error).isConnectionFailure, "\(error)") }
        let no = [
            TransportError(.connectionReset), TransportError(.timeout), TransportError.badResponse(.cutShort),
            TransportError(.noFreeLocalPort, "connect: EADDRNOTAVAIL (Cannot assign requested address)"),
            // Decided on the reason, not the words: a detail that reads like a connect is not one.
            TransportError(.systemCallFailed, "connect: ENETUNREACH (Network is unreachable)"),
            TransportError(.staleConnection, "stale keep-alive connection")
        ]
        for error in no { #expect(!Outcome(error).isConnectionFailure, "\(error)") }
        // A hand-made outcome with a connection failure's words is not one either: only the transport's reason says so.
        #expect(!Outcome(.transportError, "connection refused").isConnectionFailure)
        #expect(!Outcome(.httpError, "503").isConnectionFailure && !Outcome.ok.isConnectionFailure)
    }
}
