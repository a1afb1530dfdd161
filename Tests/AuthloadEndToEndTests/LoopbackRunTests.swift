import AuthloadCore
import AuthloadFlows
import AuthloadStaging
import AuthloadTransport
import Foundation
import Testing

/// Runs FCSDK login through the real transport against the embedded server on 127.0.0.1.
@Suite("FCSDK login over loopback", .serialized, .timeLimit(.minutes(2)))
struct LoopbackRunTests {
    func run(users: Int, duration: Duration, think: Duration, staging: StagingConfiguration) async throws -> RunOutcome {
        let group = try EventLoopGroup(loops: 2)
        defer { group.shutdown() }
        let server = try HTTPServer(group: group, port: 0, service: StagingServer(configuration: staging))
        defer { server.close() }
        let endpoint = Endpoint(host: "127.0.0.1", port: server.port)
        let plan = RunPlan(
            name: "loopback", target: .url(TargetURL(endpoint: endpoint)),
            load: LoadPlan(users: users, duration: duration, thinkTime: .fixed(think), gracefulStop: .seconds(5)),
            flows: [FlowPlan(name: "login", kind: "fcsdk-login", options: ProfileReader(path: "flows[0]", value: .null))],
            users: UserFeeder())
        let runner = Runner(
            plan: plan, flows: [FCSDKLoginFlow(options: .init())], transport: SocketTransport(group: group),
            endpoint: endpoint, clock: ContinuousClock())
        return await runner.run()
    }

    @Test("a fixed 20 ms login latency is reported as a login p50 between 20 and 23 ms")
    func fixedLatency() async throws {
        var staging = StagingConfiguration()
        staging.fcsdk.latency = .fixed(.milliseconds(20))
        let outcome = try await run(users: 50, duration: .seconds(3), think: .milliseconds(50), staging: staging)
        let login = try #require(outcome.measured.metrics.first { $0.id == MetricID(flow: "login", step: "login") })
        #expect(login.count > 500)
        #expect(login.errors == 0)
        #expect((20_000...23_000).contains(login.p50Micros), "login p50 was \(login.p50Micros) µs")
        #expect(login.minMicros >= 20_000, "no response can beat the injected latency")
    }

    @Test("a 10 % injected 5xx rate is reported within two points")
    func errorRate() async throws {
        var staging = StagingConfiguration()
        staging.fcsdk.errorRate = 0.10
        let outcome = try await run(users: 40, duration: .seconds(4), think: .zero, staging: staging)
        let login = try #require(outcome.measured.metrics.first { $0.id == MetricID(flow: "login", step: "login") })
        let errors = outcome.measured.errors.filter { $0.id == login.id }
        #expect(login.count >= 2000, "need enough samples for a ±2 point bound; got \(login.count)")
        #expect(errors.map(\.kind) == [.httpError])
        #expect(errors.first?.detail == "503")
        let ratio = Double(login.errors) / Double(login.count)
        #expect(abs(ratio - 0.10) <= 0.02, "5xx ratio was \(ratio)")
    }

    @Test("a wrong password is an auth failure, and a refused connection is a transport error")
    func classification() async throws {
        var staging = StagingConfiguration()
        staging.fcsdk.password = "something-else"
        let outcome = try await run(users: 5, duration: .milliseconds(500), think: .milliseconds(50), staging: staging)
        let login = try #require(outcome.measured.metrics.first { $0.id.step == "login" })
        #expect(login.count > 0 && login.errors == login.count)
        #expect(outcome.measured.errors.allSatisfy { $0.kind == .authFailure && $0.detail == "401" })

        let group = try EventLoopGroup(loops: 1)
        defer { group.shutdown() }
        // Port 1 on loopback: nothing listens there, so the connect is refused.
        let client = SocketTransport(group: group).makeClient(for: Endpoint(host: "127.0.0.1", port: 1))
        // Typed, with the errno of the connect that failed, wherever the failure showed (the first write or SO_ERROR).
        let refused = try await #require(throws: TransportError.self) {
            try await client.execute(HTTPRequest(method: "GET", target: "/"), timeout: .seconds(5))
        }
        #expect(refused.kind == .connectionRefused && refused.reason == .refused && refused.detail == "connect")
        #expect(refused.systemCall?.code == ECONNREFUSED)
        #expect(Outcome(refused).detail == "connection refused" && Outcome(refused).isConnectionFailure)
    }
}
