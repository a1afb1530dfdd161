import AuthloadCore
import AuthloadFlows
import AuthloadStaging
import AuthloadTesting
import Testing

/// Runs one FCSDK flow iteration for one user against a responder, in process on a manual clock.
private func runOnce(
    options: FCSDKLoginFlow.Options = .init(),
    user: VirtualUser = VirtualUser(index: 0, identity: UserIdentity(username: "u0", password: "demo-password"), seed: 1),
    respond: @escaping SimulatedTransport<ManualClock>.Responder
) async -> (Outcome, [ErrorCount]) {
    let clock = ManualClock()
    let flow = FCSDKLoginFlow(options: options)
    let catalog = MetricCatalog(flows: [("login", flow.stepNames)])
    let recorder = MetricsRecorder(metricCount: catalog.count, interval: .seconds(1))
    let transport = SimulatedTransport(clock: clock, respond: respond)
    let context = FlowContext(
        clock: clock, client: transport.makeClient(for: Endpoint(host: "staging", port: 80)),
        stepTimeout: .seconds(10), deadline: clock.now.advanced(by: .seconds(60)), recorder: recorder,
        firstStepMetric: catalog.stepMetric(flow: 0, step: 0), shard: 0, runStart: clock.now)
    let outcome = await flow.run(context, user: user)
    let collector = Collector(catalog: catalog, recorder: recorder, lag: 1)
    return (outcome, collector.finish(lastInterval: 0, activeUsers: 0).errors)
}

@Suite("FCSDK login flow")
struct FCSDKFlowTests {
    @Test("logs in against the staging service and logs out the same session")
    func loginLogout() async {
        // A server of its own: the count of its sessions below is this test's alone when the suites run in parallel.
        let staging = StagingServer(configuration: StagingConfiguration())
        let seen = Locked<[String]>([])
        let (outcome, errors) = await runOnce { request, _ in
            seen.withLock { $0.append("\(request.method) \(request.target)") }
            return staging.respond(to: request)
        }
        #expect(outcome == .ok)
        #expect(errors.isEmpty)
        let requests = seen.withLock { $0 }
        #expect(requests.count == 2)
        #expect(requests.first == "POST /csdk-sample/SDK/login")
        #expect(requests.last?.hasPrefix("DELETE /csdk-sample/SDK/login/id/") == true)
        #expect(staging.fcsdk.activeSessions == 0)
    }

    @Test("logoutPath names where the session ends, {sessionid} standing for it; a profile's is read and checked")
    func logoutPathOption() async throws {
        let seen = Locked<[String]>([])
        var options = FCSDKLoginFlow.Options()
        options.logoutPath = "/sessions/{sessionid}/end"
        // A server of its own: the session it logs in to stays open there.
        let staging = StagingServer(configuration: StagingConfiguration())
        let (outcome, _) = await runOnce(options: options) { request, _ in
            seen.withLock { $0.append("\(request.method) \(request.target)") }
            if request.method == "DELETE" {
                let ok = request.target.hasPrefix("/sessions/") && request.target.hasSuffix("/end")
                return ServiceReply(HTTPResponse(status: ok ? 200 : 404))
            }
            return staging.respond(to: request)
        }
        #expect(outcome == .ok)
        let logout = try #require(seen.withLock { $0 }.last)
        #expect(logout.hasPrefix("DELETE /sessions/") && logout.hasSuffix("/end") && !logout.contains("{sessionid}"))

        func plan(_ options: String) throws -> FlowPlan {
            FlowPlan(
                name: "login", kind: "fcsdk-login",
                options: ProfileReader(path: "flows[0]", value: try JSONValue.parse(Array(options.utf8))))
        }
        let flow = try FlowCatalog.make(plan(#"{"logoutPath": "/sessions/{sessionid}/end"}"#), target: "")
        #expect((flow as? FCSDKLoginFlow)?.options.logoutPath == "/sessions/{sessionid}/end")
        #expect(FCSDKLoginFlow.Options().logoutPath == nil, "by default {loginPath}/id/{sessionid}")
        #expect(throws: ProfileError.self) { try FlowCatalog.make(plan(#"{"logoutPath": "/sessions/end"}"#), target: "") }
    }

    @Test(
        "classifies each server answer to login",
        arguments: [
            (401, "{\"error\":\"no\"}", Outcome(.authFailure, "401")),
            (200, "{\"voiceUser\":\"1001\"}", Outcome(.protocolError, "200 without sessionid")),
            (200, "{\"sessionid\":\"\"}", Outcome(.protocolError, "200 without sessionid")),
            (200, "not json", Outcome(.protocolError, "200 without sessionid")),
            (503, "", Outcome(.httpError, "503"))
        ])
    func classification(status: Int, body: String, expected: Outcome) async {
        let (outcome, errors) = await runOnce { _, _ in ServiceReply(HTTPResponse(status: status, body: Array(body.utf8))) }
        #expect(outcome == expected)
        #expect(errors.contains { $0.id.step == "login" && $0.kind == expected.kind && $0.detail == expected.detail })
    }

    @Test("a refused connection is a transport error and a logout of an unknown session an HTTP error")
    func failures() async {
        let (refused, _) = await runOnce { _, _ in ServiceReply(failure: TransportError(.connectionRefused, "connect")) }
        #expect(refused.kind == .transportError && refused.detail == "connection refused" && refused.isConnectionFailure)
        let (unknown, _) = await runOnce { request, _ in
            request.method == "POST" ? ServiceReply(.json(status: 200, ["sessionid": "abc"])) : ServiceReply(.json(status: 404, [:]))
        }
        #expect(unknown == Outcome(.httpError, "404"))
    }

    @Test("cookies are cleared before each login, or kept when the profile says keep", arguments: [true, false])
    func cookiePolicy(clear: Bool) async {
        let user = VirtualUser(index: 0, identity: UserIdentity(username: "u0", password: "demo-password"), seed: 1)
        let cookieHeaders = Locked<[String?]>([])
        var options = FCSDKLoginFlow.Options()
        options.clearCookies = clear
        for _ in 0..<2 {
            _ = await runOnce(options: options, user: user) { request, _ in
                if request.method == "POST" { cookieHeaders.withLock { $0.append(request.headers["Cookie"]) } }
                var response = HTTPResponse.json(status: 200, ["sessionid": "s1"])
                response.headers.add("Set-Cookie", "LB=node-7; Path=/; HttpOnly")
                return ServiceReply(response)
            }
        }
        #expect(cookieHeaders.withLock { $0 } == [nil, clear ? nil : "LB=node-7"])
    }
}
