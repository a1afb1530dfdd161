import AuthloadCore
import AuthloadFlows
import AuthloadStaging
import AuthloadTransport
import AuthloadWire
import Testing

/// Each flow over real sockets against the embedded staging server, on HTTP/1.1 and on HTTP/2 (h2c with prior
/// knowledge): the HTTP requests authload says it sent equal what the server's access log counted, retries, refresh
/// calls and WebSocket upgrades included, and each request is counted under the version that carried it.
@Suite("HTTP requests counted as the server counts them", .serialized, .timeLimit(.minutes(1)))
struct HTTPCountTests {
    static let versions: [HTTPVersionChoice] = [.http1, .http2]

    struct Counted {
        var outcome: RunOutcome
        var server: StagingServer

        var version: HTTPVersionChoice
        var flow: MetricSummary? { outcome.measured.metrics.first { $0.id == MetricID(flow: "f", step: nil) } }

        /// Every request was answered on the version asked for, except WebSocket upgrades, which are HTTP/1.1 always.
        func expectCountedByVersion(upgrades: Int = 0, sourceLocation: SourceLocation = #_sourceLocation) {
            guard let flow, let counts = flow.httpRequestsByProtocol, let total = flow.httpRequests else {
                Issue.record("no requests by protocol", sourceLocation: sourceLocation)
                return
            }
            let expected =
                version == .http2
                ? RequestsByProtocol(h1: upgrades, h2: total - upgrades) : RequestsByProtocol(h1: total, h2: 0)
            #expect(counts == expected, sourceLocation: sourceLocation)
        }

        /// Samples of request steps: what the "requests" total counted before HTTP requests were.
        var requestSteps: Int { outcome.measured.metrics.filter { $0.id.step != nil && !$0.isEvent }.reduce(0) { $0 + $1.count } }
        func steps(_ step: String) -> Int { outcome.measured.metrics.first { $0.id == MetricID(flow: "f", step: step) }?.count ?? 0 }
    }

    /// Runs `flow` with a few users for `duration` against a staging server configured by `configure`.
    func run(
        _ flow: any Flow, kind: String, version: HTTPVersionChoice, users: Int = 5, duration: Duration = .milliseconds(800),
        feeder: UserFeeder = UserFeeder(), timeouts: Timeouts = Timeouts(step: .seconds(5), flow: .seconds(20)),
        _ configure: (inout StagingConfiguration) -> Void = { _ in }
    ) async throws -> Counted {
        var configuration = StagingConfiguration()
        configure(&configuration)
        let server = StagingServer(configuration: configuration)
        let group = try EventLoopGroup(loops: 2)
        defer { group.shutdown() }
        let listener = try HTTPServer(group: group, port: 0, service: server)
        defer { listener.close() }
        let endpoint = Endpoint(host: "127.0.0.1", port: listener.port)
        let plan = RunPlan(
            name: "count", target: .url(TargetURL(endpoint: endpoint)),
            load: LoadPlan(users: users, duration: duration, thinkTime: .fixed(.milliseconds(20)), gracefulStop: .seconds(15)),
            flows: [FlowPlan(name: "f", kind: kind, options: ProfileReader(path: "flows[0]", value: .null))],
            users: feeder, timeouts: timeouts)
        let transport = SocketTransport(
            group: group, configuration: SocketTransportConfiguration(connections: ConnectionSettings(http: version)))
        let outcome = await Runner(plan: plan, flows: [flow], transport: transport, endpoint: endpoint, clock: ContinuousClock()).run()
        return Counted(outcome: outcome, server: server, version: version)
    }

    @Test("FCSDK login: login and logout, one request each", arguments: versions)
    func fcsdk(version: HTTPVersionChoice) async throws {
        let counted = try await run(FCSDKLoginFlow(options: .init()), kind: "fcsdk-login", version: version)
        let flow = try #require(counted.flow)
        #expect(flow.count >= 5 && flow.errors == 0, "\(counted.outcome.measured.errors)")
        #expect(flow.httpRequests == counted.server.accessLog.total, "\(counted.server.accessLog.byRoute)")
        #expect(flow.httpRequests == counted.steps("login") + counted.steps("logout"))
        counted.expectCountedByVersion()
    }

    @Test("Okta IDX MFA: every 429 answered and sent again counts, though a retry is an event, not a step", arguments: versions)
    func okta(version: HTTPVersionChoice) async throws {
        let counted = try await run(OktaIDXFlow(options: .init()), kind: "okta-idx-mfa", version: version) {
            $0.okta.rateLimit = .init(limit: 3, window: .seconds(1), paths: [IDXPaths.introspect])
        }
        let flow = try #require(counted.flow)
        #expect(flow.count >= 5 && flow.errors == 0, "\(counted.outcome.measured.errors)")
        let log = counted.server.accessLog
        #expect(counted.steps("retry") > 0, "the rate limit was hit: \(log.byRoute)")
        #expect(flow.httpRequests == log.total, "\(log.byRoute)")
        #expect(counted.requestSteps + counted.steps("retry") == log.total, "request steps alone miss every retry")
        counted.expectCountedByVersion()
    }

    @Test("GCCS: the WebSocket upgrade counts, on HTTP/1.1 always; STOMP frames and pushed statuses do not", arguments: versions)
    func gccs(version: HTTPVersionChoice) async throws {
        let counted = try await run(GCCSAuthFlow(options: .init()), kind: "gccs-auth", version: version) {
            $0.gccs.nodeDelay = .fixed(.milliseconds(10))
        }
        let flow = try #require(counted.flow)
        #expect(flow.count >= 5 && flow.errors == 0, "\(counted.outcome.measured.errors)")
        let log = counted.server.accessLog
        #expect(log.byRoute["GET /ws/v3/app/websocket"] == flow.count, "one upgrade per iteration: \(log.byRoute)")
        #expect(flow.httpRequests == log.total, "\(log.byRoute)")
        #expect(flow.httpRequests == 5 * flow.count, "auth, upgrade, nodes, complete, token")
        counted.expectCountedByVersion(upgrades: flow.count)
    }

    @Test("Streem: a reactive refresh is two requests and the call answered 401 is one more", arguments: versions)
    func streem(version: HTTPVersionChoice) async throws {
        var options = StreemSessionFlow.Options()
        options.login = .openid
        options.refresh = .reactive
        options.hold = .fixed(.milliseconds(2_500))
        options.callInterval = .milliseconds(300)
        let counted = try await run(
            StreemSessionFlow(options: options), kind: "streem-session", version: version, users: 3, duration: .milliseconds(500)
        ) {
            $0.streem.tokenLifetime = .seconds(1)
        }
        let flow = try #require(counted.flow)
        #expect(flow.count >= 3 && flow.errors == 0, "\(counted.outcome.measured.errors)")
        let log = counted.server.accessLog
        #expect(counted.steps("expired") > 0 && counted.server.streem.counts.refreshGrants == counted.steps("refresh"))
        #expect(log.byRoute["POST /openid/token"] == counted.steps("token") + counted.steps("refresh"), "\(log.byRoute)")
        #expect(flow.httpRequests == log.total, "\(log.byRoute)")
        // Request steps count a refresh once (it is two calls) and leave out each call answered 401.
        #expect(counted.requestSteps + counted.steps("refresh") + counted.steps("expired") == log.total)
        counted.expectCountedByVersion()
    }
}
