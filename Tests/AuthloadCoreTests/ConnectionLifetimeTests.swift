import AuthloadTesting
import Testing

@testable import AuthloadCore

/// Counts the clients a run makes and closes, around the simulated transport.
private final class CountingTransport: Transport {
    let inner: SimulatedTransport<ManualClock>
    let made = Locked(0)
    let closed = Locked(0)

    init(_ inner: SimulatedTransport<ManualClock>) { self.inner = inner }

    func makeClient(for endpoint: Endpoint) -> any HTTPClient {
        made.withLock { $0 += 1 }
        return Client(inner: inner.makeClient(for: endpoint), closed: closed)
    }

    struct Client: HTTPClient {
        let inner: any HTTPClient
        let closed: Locked<Int>

        func execute(_ request: HTTPRequest, timeout: Duration, isolation: isolated (any Actor)?) async throws -> HTTPResponse {
            try await inner.execute(request, timeout: timeout, isolation: isolation)
        }

        func openWebSocket(_ request: HTTPRequest, protocols: [String], timeout: Duration) async throws -> any WebSocketConnection {
            try await inner.openWebSocket(request, protocols: protocols, timeout: timeout)
        }

        func shutdown() {
            closed.withLock { $0 += 1 }
            inner.shutdown()
        }
    }
}

@Suite("How long a user keeps its connections (connections.lifetime)", .timeLimit(.minutes(1)))
struct ConnectionLifetimeTests {
    let clock = ManualClock()
    let endpoint = Endpoint(host: "127.0.0.1", port: 1)

    /// 5 users for 10 s, one 1 s iteration each second (two 50 ms steps, 900 ms think): 50 iterations.
    func run(_ lifetime: ConnectionLifetime) async -> (made: Int, closed: Int, iterations: Int) {
        let transport = CountingTransport(
            SimulatedTransport(clock: clock) { _, _ in ServiceReply(HTTPResponse(status: 200), after: .milliseconds(50)) })
        var plan = RunPlan.closed(users: 5, duration: .seconds(10), think: .milliseconds(900))
        plan.connections.policy = .perUser(idleTimeout: ConnectionSettings.defaultIdleTimeout, lifetime: lifetime)
        let runner = Runner(plan: plan, flows: [PingFlow()], transport: transport, endpoint: endpoint, clock: clock)
        let run = Task { await runner.run() }
        await clock.run(until: clock.now.advanced(by: .seconds(10)), quiet: runner.control)
        let outcome = await run.value
        return (transport.made.withLock { $0 }, transport.closed.withLock { $0 }, outcome.iterations)
    }

    @Test("per iteration (the default): a new client for every flow, closed after it")
    func perIteration() async {
        let counted = await run(.iteration)
        #expect(counted.iterations == 50)
        #expect(counted.made == 50 && counted.closed == 50)
    }

    @Test("per user: one client for each user's whole life, closed when the user leaves")
    func perUser() async {
        let counted = await run(.user)
        #expect(counted.iterations == 50)
        #expect(counted.made == 5 && counted.closed == 5)
    }

    @Test("a profile says which, and refuses a lifetime for a shared pool and an empty source address")
    func profile() throws {
        func plan(_ connections: String) throws(ProfileError) -> RunPlan {
            try Profile.parse(
                """
                {"name": "c", "target": {"baseURL": "http://127.0.0.1:1"}, "load": {"users": 1, "duration": "1s"},
                 "flows": [{"name": "f", "kind": "http"}], "connections": \(connections)}
                """, fileName: "c.json")
        }
        #expect(try plan("{}").connections.lifetime == .iteration)
        let kept = try plan(#"{"lifetime": "user", "sourceAddresses": ["127.0.0.2", "127.0.0.3"]}"#)
        #expect(kept.connections.lifetime == .user && kept.connections.sourceAddresses == ["127.0.0.2", "127.0.0.3"])
        #expect(throws: ProfileError("connections.lifetime", "only means something with \"policy\": \"per-user\"")) {
            try plan(#"{"policy": "shared", "lifetime": "user"}"#)
        }
        #expect(throws: ProfileError("connections.sourceAddresses[0]", "must be a local IP address, e.g. \"127.0.0.2\"")) {
            try plan(#"{"sourceAddresses": [""]}"#)
        }
    }

    @Test("a socket error keeps its call, errno and advice in the error breakdown; other kinds keep their stable names")
    func socketErrorDetail() {
        let ports = TransportError(.other, "connect: EADDRNOTAVAIL (Cannot assign requested address): no free local port for a:1")
        #expect(
            Outcome(ports).detail == "socket error: connect: EADDRNOTAVAIL (Cannot assign requested address): no free local port for a:1")
        #expect(Outcome(TransportError(.connectionRefused, "connect")).detail == "connection refused")
        #expect(Outcome(TransportError(.other)).detail == "socket error")
        // The generator's own limit: named as such, and not an HTTP request, since none was sent.
        let files = TransportError(.outOfFileDescriptors, "socket: EMFILE (Too many open files): out of file descriptors")
        #expect(files.kind == .generatorLimit)
        #expect(
            Outcome(files).detail
                == "generator limit: socket: EMFILE (Too many open files): out of file descriptors: raise `ulimit -n` (authload "
                + "raises the soft limit to the hard one) or run fewer users per process")
        #expect(!CountingClient.reachedTheWire(files))
        #expect(CountingClient.reachedTheWire(TransportError(.timeout)))
    }
}
