import AuthloadCore
import AuthloadStaging
import AuthloadTesting
import AuthloadWire
import Testing

@testable import AuthloadFlows

/// Passes requests to the staging server, letting a test see or change them on the way.
final class TappedService: HTTPService, Sendable {
    let server: StagingServer
    let tap: @Sendable (inout HTTPRequest) -> Void
    /// Answers instead of the server when it returns a response.
    let answer: @Sendable (HTTPRequest) -> HTTPResponse?
    private let seen = Locked<[HTTPRequest]>([])

    init(
        _ server: StagingServer, answer: @escaping @Sendable (HTTPRequest) -> HTTPResponse? = { _ in nil },
        tap: @escaping @Sendable (inout HTTPRequest) -> Void = { _ in }
    ) {
        self.server = server
        self.answer = answer
        self.tap = tap
    }

    var requests: [HTTPRequest] { seen.withLock { $0 } }

    func respond(to request: HTTPRequest) -> ServiceReply {
        var request = request
        tap(&request)
        seen.withLock { $0.append(request) }
        if let response = answer(request) { return ServiceReply(response, after: .milliseconds(10)) }
        return server.respond(to: request)
    }
}

/// A clock for one flow against an HTTP-only service: a sleep notes its deadline and moves the manual clock
/// there at once (an in-process host with no WebSocket schedules nothing else), so a test can assert an exact
/// back-off without driving the clock from outside.
struct JumpingClock: Clock {
    typealias Instant = ManualClock.Instant
    let base: ManualClock
    let log: Locked<[ManualClock.Instant]>

    var now: Instant { base.now }
    var minimumResolution: Duration { .zero }

    func sleep(until deadline: Instant, tolerance: Duration?) async throws {
        try Task.checkCancellation()
        log.withLock { $0.append(deadline) }
        base.advance(to: deadline)
    }
}

@Suite("Okta IDX flow against the staging service, in virtual time", .timeLimit(.minutes(1)))
struct OktaIDXFlowTests {
    let clock = ManualClock()
    /// The staging service's "now" at virtual time zero: a whole multiple of every rate-limit window used here.
    static let epoch: Duration = .seconds(1_800_000_000)

    /// Every call answers in 10 ms; the email or SMS goes out in 300 ms.
    func staging(_ configure: (inout OktaIDXService.Options) -> Void = { _ in }) -> StagingServer {
        var configuration = StagingConfiguration()
        configuration.okta.latency = .fixed(.milliseconds(10))
        configuration.okta.dispatchLatency = .fixed(.milliseconds(300))
        configure(&configuration.okta)
        let clock = self.clock
        return StagingServer(configuration: configuration, now: { Self.epoch + clock.now.offset })
    }

    func flow(_ configure: (inout OktaIDXFlow.Options) -> Void = { _ in }) -> OktaIDXFlow {
        var options = OktaIDXFlow.Options()
        configure(&options)
        return OktaIDXFlow(options: options)
    }

    /// Runs one iteration on a ``JumpingClock``, so back-offs pass at once and their deadlines are noted.
    func probe(_ flow: OktaIDXFlow, _ service: any HTTPService) async -> FlowProbe.Result {
        await probeNotingSleeps(flow, service).result
    }

    func probeNotingSleeps(_ flow: OktaIDXFlow, _ service: any HTTPService, securityAnswer: String? = nil) async -> (
        result: FlowProbe.Result, sleeps: [ManualClock.Instant]
    ) {
        let host = InProcessHost(clock: clock, service: service)
        let log = Locked<[ManualClock.Instant]>([])
        let flowClock = JumpingClock(base: clock, log: log)
        let catalog = MetricCatalog(flows: [("okta", flow.stepNames)])
        let recorder = MetricsRecorder(metricCount: catalog.count, interval: .seconds(1))
        let collector = Collector(catalog: catalog, recorder: recorder, lag: 1)
        let start = flowClock.now
        let context = FlowContext(
            clock: flowClock, client: host.makeClient(for: Endpoint(host: "staging", port: 80)),
            stepTimeout: .seconds(10), deadline: start.advanced(by: .seconds(120)), recorder: recorder,
            firstStepMetric: catalog.stepMetric(flow: 0, step: 0), shard: 0, runStart: start)
        var identity = UserIdentity(username: "user0", password: "pw")
        identity.fields["securityAnswer"] = securityAnswer
        let user = VirtualUser(index: 0, identity: identity, seed: 1)
        let outcome = await flow.run(context, user: user)
        let elapsed = start.duration(to: flowClock.now)
        recorder.record(metric: catalog.flowMetric(0), startOffset: .zero, latency: elapsed, outcome: outcome, shard: 0)
        let measured = collector.finish(lastInterval: Int(elapsed.seconds) + 1, activeUsers: 0, duration: elapsed)
        return (FlowProbe.Result(outcome: outcome, elapsed: elapsed, measured: measured), log.withLock { $0 })
    }

    /// A request another user sent, using up rate-limit budget.
    func spend(_ server: StagingServer, _ path: String) {
        _ = server.respond(to: HTTPRequest(method: "POST", target: path, body: Array(#"{"stateHandle": "other"}"#.utf8)))
    }

    @Test(
        "a login follows the remediations of both policy shapes to a token, with exact step latencies",
        arguments: [
            (OktaIDXService.Policy.identifierFirst, OktaIDXFlow.Factor.email),
            (.identifierFirst, .sms), (.singleForm, .email), (.singleForm, .sms)
        ])
    func happyPath(policy: OktaIDXService.Policy, factor: OktaIDXFlow.Factor) async throws {
        let server = staging { $0.policy = policy }
        let result = await probe(flow { $0.factors = [factor] }, server)
        #expect(result.outcome == .ok)
        let identifierFirst = policy == .identifierFirst
        // Each call 10 ms; select also sends the code (300 ms); identifier-first adds the password step.
        #expect(result.elapsed == .milliseconds(identifierFirst ? 370 : 360))
        for step in ["interact", "introspect", "identify", "challenge-\(factor.rawValue)", "token"] {
            #expect(result.metric("okta", step)?.count == 1, "\(step)")
            #expect(isNear(result.metric("okta", step)?.p50Micros, .milliseconds(10)), "\(step)")
        }
        #expect(isNear(result.metric("okta", "select-authenticator")?.p50Micros, .milliseconds(310)))
        #expect(result.metric("okta", "challenge-password")?.count == (identifierFirst ? 1 : 0))
        #expect(result.metric("okta", "retry")?.count == 0)
        #expect(result.metric("okta", "restart")?.count == 0)
        #expect(result.measured.errors.isEmpty)
        #expect(server.okta.tableSizes.transactions == 0, "a finished login leaves no transaction")
        #expect(server.okta.tableSizes.grants == 0, "the interaction code was redeemed")
    }

    @Test("the flow sends the chosen factor and the forms as nested JSON, and PKCE S256 with an 86-character verifier")
    func requestBodies() async throws {
        let tapped = TappedService(staging())
        let result = await probe(flow { $0.factors = [.sms] }, tapped)
        #expect(result.outcome == .ok)
        let select = try #require(tapped.requests.first { $0.path == IDXPaths.challenge })
        let body = try JSONValue.parse(select.body)
        #expect(body["authenticator"] == ["id": "aut-phone", "methodType": "sms", "enrollmentId": "pae-authload"])
        #expect(body["stateHandle"]?.stringValue?.isEmpty == false)
        #expect(select.headers["Content-Type"] == IDXMediaType.json)
        #expect(select.headers["Accept"] == IDXMediaType.ion)
        let interact = Dictionary(FormURLEncoding.decode(try #require(tapped.requests.first).body), uniquingKeysWith: { a, _ in a })
        let token = Dictionary(FormURLEncoding.decode(try #require(tapped.requests.last).body), uniquingKeysWith: { a, _ in a })
        let verifier = try #require(token["code_verifier"])
        #expect(verifier.count == 86)
        #expect(interact["code_challenge"] == Base64.urlEncoded(Digest.sha256(Array(verifier.utf8))))
        #expect(interact["code_challenge_method"] == "S256")
        #expect(token["grant_type"] == "interaction_code" && token["client_secret"] == nil)
    }

    @Test("a wrong passcode is an auth failure named api.authn.error.PASSCODE_INVALID on the code's challenge step")
    func wrongPasscode() async throws {
        let result = await probe(flow(), staging { $0.wrongPasscodeRate = 1 })
        #expect(result.outcome == Outcome(.authFailure, IDXMessageKey.passcodeInvalid))
        #expect(result.errors("okta", "challenge-email", .authFailure, IDXMessageKey.passcodeInvalid) == 1)
        #expect(result.metric("okta", "token")?.count == 0)
    }

    @Test("a wrong password is an auth failure on the challenge-password step, keyed, never showing the password")
    func wrongPassword() async throws {
        let result = await probe(flow(), staging { $0.password = "the-right-one" })
        #expect(result.outcome == Outcome(.authFailure, IDXMessageKey.incorrectPassword))
        #expect(result.errors("okta", "challenge-password", .authFailure, IDXMessageKey.incorrectPassword) == 1)
        #expect(!result.measured.errors.contains { $0.detail.contains("pw") })
    }

    @Test("a 429 on introspect is waited out until X-Rate-Limit-Reset by the server's Date, then retried, and counted as a retry")
    func rateLimitedIntrospect() async throws {
        let server = staging {
            $0.rateLimit = .init(limit: 1, window: .seconds(10), paths: [IDXPaths.introspect])
            $0.dispatchLatency = .none
        }
        spend(server, IDXPaths.introspect)
        let (result, sleeps) = await probeNotingSleeps(flow(), server)
        // interact 0–10 ms; introspect 10–20 ms answers 429 with Date = epoch and reset = epoch + 10 s.
        #expect(sleeps == [ManualClock.Instant(offset: .milliseconds(10_020))])
        #expect(result.outcome == .ok)
        #expect(result.elapsed == .milliseconds(10_080))
        #expect(result.metric("okta", "retry")?.count == 1)
        #expect(isNear(result.metric("okta", "retry")?.p50Micros, .seconds(10)))
        #expect(result.metric("okta", "introspect")?.count == 1)
        #expect(result.metric("okta", "introspect")?.errors == 0)
        #expect(result.measured.errors.isEmpty, "a retry is not an error")
    }

    @Test("a 429 on challenge/answer is read as ION and not retried")
    func rateLimitedAnswer() async throws {
        let server = staging {
            $0.policy = .singleForm
            $0.rateLimit = .init(limit: 1, window: .seconds(10), paths: [IDXPaths.answer])
        }
        spend(server, IDXPaths.answer)
        let result = await probe(flow(), server)
        #expect(result.outcome == Outcome(.protocolError, IDXMessageKey.rateLimited))
        #expect(result.errors("okta", "challenge-email", .protocolError, IDXMessageKey.rateLimited) == 1)
        #expect(result.metric("okta", "retry")?.count == 0)
        #expect(result.elapsed == .milliseconds(350))
    }

    /// The state handle lives 5 s; the select budget (2 per 10 s) is spent, so the first select waits 10 s for
    /// the next window and then finds its state handle expired.
    func expiringStaging() -> StagingServer {
        let server = staging {
            $0.stateHandleLifetime = .seconds(5)
            $0.dispatchLatency = .none
            $0.rateLimit = .init(limit: 2, window: .seconds(10), paths: [IDXPaths.challenge])
        }
        spend(server, IDXPaths.challenge)
        spend(server, IDXPaths.challenge)
        return server
    }

    @Test("an expired state handle starts the login over from interact when the profile allows it")
    func expiryRestarts() async throws {
        let server = expiringStaging()
        let (result, sleeps) = await probeNotingSleeps(flow { $0.restartOnExpiry = true }, server)
        #expect(sleeps == [ManualClock.Instant(offset: .milliseconds(10_050))])
        #expect(result.outcome == .ok)
        // The retried select answers expired at 10.060 s; the second attempt takes 7 × 10 ms.
        #expect(result.elapsed == .milliseconds(10_130))
        #expect(result.metric("okta", "restart")?.count == 1)
        #expect(isNear(result.metric("okta", "restart")?.p50Micros, .milliseconds(10_060)))
        #expect(result.metric("okta", "interact")?.count == 2)
        #expect(result.metric("okta", "select-authenticator")?.count == 1)
        #expect(result.measured.errors.isEmpty)
    }

    @Test("an expired state handle is a protocol error named idx.session.expired when restarts are off")
    func expiryFails() async throws {
        let server = expiringStaging()
        let result = await probe(flow(), server)
        #expect(result.outcome == Outcome(.protocolError, IDXMessageKey.sessionExpired))
        #expect(result.errors("okta", "select-authenticator", .protocolError, IDXMessageKey.sessionExpired) == 1)
        #expect(result.elapsed == .milliseconds(10_060))
        #expect(result.metric("okta", "restart")?.count == 0)
    }

    @Test("a PKCE mismatch at the token endpoint is invalid_grant")
    func pkceMismatch() async throws {
        let tampered = TappedService(
            staging(),
            tap: { request in
                guard request.path == IDXPaths().token else { return }
                let pairs = FormURLEncoding.decode(request.body).map {
                    $0.0 == "code_verifier" ? ($0.0, String(repeating: "x", count: 86)) : $0
                }
                request.body = FormURLEncoding.encode(pairs)
            })
        let result = await probe(flow(), tampered)
        #expect(result.outcome == Outcome(.protocolError, "invalid_grant"))
        #expect(result.errors("okta", "token", .protocolError, "invalid_grant") == 1)
    }

    @Test("a replayed interaction code is invalid_grant")
    func replayedCode() async throws {
        let tapped = TappedService(staging())
        #expect(await probe(flow(), tapped).outcome == .ok)
        let token = try #require(tapped.requests.last)
        let replay = tapped.server.respond(to: token)
        guard case .success(let response) = replay.result else {
            Issue.record("no response")
            return
        }
        #expect(response.status == 400)
        #expect(try JSONValue.parse(response.body)["error"] == "invalid_grant")
    }

    @Test("a select offering none of the profile's factors ends the login naming the remediation and what it offered")
    func cannotProceed() async throws {
        let server = staging { $0.factors = ["email"] }
        let result = await probe(flow { $0.factors = [.sms, .voice] }, server)
        let expected = Outcome(.protocolError, "cannot proceed at remediation select-authenticator-authenticate; offered: email")
        #expect(result.outcome == expected)
        #expect(result.errors("okta", "challenge-password", expected.kind, expected.detail) == 1)
        #expect(result.metric("okta", "select-authenticator")?.count == 0)
    }

    @Test(
        "every policy shape of the staging org is walked to a token with each round trip counted",
        arguments: [
            (
                OktaIDXService.Policy.selectFirst, [OktaIDXFlow.Factor.email], ["email"],
                ["select-authenticator": 2, "challenge-password": 1, "challenge-email": 1]
            ),
            (
                .selectFirst, [.sms], ["email", "sms", "voice"],
                ["select-authenticator": 2, "challenge-password": 1, "verification-data": 1, "challenge-sms": 1]
            ),
            (
                .selectFirst, [.voice], ["email", "sms", "voice"],
                ["select-authenticator": 2, "challenge-password": 1, "verification-data": 1, "challenge-voice": 1]
            ),
            (
                .factorFirst, [.voice, .email], ["sms", "voice", "email"],
                ["select-authenticator": 1, "challenge-voice": 1, "challenge-password": 1]
            ),
            (.securityQuestion, [.email], ["email"], ["select-authenticator": 0, "challenge-password": 1, "challenge-question": 1]),
            (.identifierFirst, [.voice], ["email", "voice"], ["select-authenticator": 1, "challenge-password": 1, "challenge-voice": 1])
        ] as [(OktaIDXService.Policy, [OktaIDXFlow.Factor], [String], [String: Int])])
    func policies(policy: OktaIDXService.Policy, factors: [OktaIDXFlow.Factor], offered: [String], steps: [String: Int]) async throws {
        let server = staging {
            $0.policy = policy
            $0.factors = offered
            $0.securityAnswer = "broccoli"
        }
        let result = await probeNotingSleeps(flow { $0.factors = factors }, server, securityAnswer: "broccoli").result
        #expect(result.outcome == .ok)
        #expect(result.measured.errors.isEmpty)
        for (step, count) in steps {
            #expect(result.metric("okta", step)?.count == count, "\(step)")
        }
        #expect(result.metric("okta", "token")?.count == 1)
        #expect(server.okta.tableSizes.transactions == 0)
    }

    @Test("a wrong security answer is an auth failure on challenge-question")
    func wrongSecurityAnswer() async throws {
        let server = staging {
            $0.policy = .securityQuestion
            $0.securityAnswer = "broccoli"
        }
        let result = await probeNotingSleeps(flow(), server, securityAnswer: "kale").result
        #expect(result.outcome == Outcome(.authFailure, IDXMessageKey.answerInvalid))
        #expect(result.errors("okta", "challenge-question", .authFailure, IDXMessageKey.answerInvalid) == 1)
    }

    @Test("a policy that requires enrollment is walked through select-authenticator-enroll and enroll-authenticator")
    func enrollment() async throws {
        let server = staging { $0.requireEnrollment = true }
        let result = await probe(flow { $0.factors = [.sms] }, server)
        #expect(result.outcome == .ok)
        #expect(result.metric("okta", "select-authenticator")?.count == 1)
        #expect(result.metric("okta", "challenge-sms")?.count == 1)
    }

    @Test("an Okta Verify push is polled at the server's refresh until it is approved")
    func pushPolled() async throws {
        // An org whose select leads to Okta Verify's push, approved while the second poll is on its way.
        let polls = Locked(0)
        let handle = Locked("")
        let server = staging { $0.policy = .singleForm }
        let service = TappedService(
            server,
            answer: { request in
                switch request.path {
                case IDXPaths.challenge:
                    // The staging org sends its email code; the client is shown Okta Verify's push instead.
                    _ = server.respond(to: request)
                    handle.withLock { $0 = (try? JSONValue.parse(request.body))?["stateHandle"]?.stringValue ?? "" }
                    return Self.ion(IDXFixtures.pushPollMembers)
                case "/idp/idx/authenticators/poll":
                    let count = polls.withLock { count in
                        count += 1
                        return count
                    }
                    return count < 2 ? Self.ion(IDXFixtures.pushPollMembers) : nil
                default:
                    return nil
                }
            },
            tap: { request in
                // The second poll is answered by the staging service as if the code had been given.
                guard request.path == "/idp/idx/authenticators/poll", polls.withLock({ $0 }) >= 1 else { return }
                request.target = IDXPaths.answer
                var body = (try? JSONValue.parse(request.body))?.objectValue ?? JSONObject()
                body.set("credentials", ["passcode": "123456"])
                body.set("stateHandle", .string(handle.withLock { $0 }))
                request.body = JSONValue.object(body).serialized()
            })
        let (result, sleeps) = await probeNotingSleeps(flow { $0.factors = [.push, .email] }, service)
        #expect(result.outcome == .ok)
        #expect(result.metric("okta", "poll")?.count == 2)
        #expect(result.metric("okta", "poll")?.errors == 0)
        #expect(sleeps.count == 2, "one wait of the server's refresh before each poll")
        #expect(zip(sleeps, sleeps.dropFirst()).allSatisfy { $0.duration(to: $1) == .milliseconds(4_010) })
    }

    @Test("a push never approved stops polling at the step timeout")
    func pushTimesOut() async throws {
        let service = TappedService(
            staging { $0.policy = .singleForm },
            answer: { request in
                request.path == IDXPaths.challenge || request.path == "/idp/idx/authenticators/poll"
                    ? Self.ion(IDXFixtures.pushPollMembers) : nil
            })
        let result = await probe(flow { $0.factors = [.push, .email] }, service)
        #expect(result.outcome == Outcome(.timeout, "not approved within the step timeout"))
        // A 10 s step timeout and a 4 s refresh: two polls, and the second's answer shows a third wait would pass it.
        #expect(result.metric("okta", "poll")?.count == 2)
        #expect(result.errors("okta", "poll", .timeout, "not approved within the step timeout") == 1)
    }

    static func ion(_ members: String) -> HTTPResponse {
        HTTPResponse(status: 200, headers: ["Content-Type": IDXMediaType.ion], body: IDXFixtures.body(members))
    }

    @Test(
        "IDX answers are classified by status and body",
        arguments: [
            (IDXPaths.identify, 503, "{}", Outcome(.httpError, "503"), "identify"),
            (IDXPaths.introspect, 200, "<html>maintenance</html>", Outcome(.protocolError, "not an ION response"), "introspect"),
            (IDXPaths.introspect, 404, #"{"error": "not found"}"#, Outcome(.httpError, "404"), "introspect"),
            (
                IDXPaths.identify, 403,
                #"{"version": "1.0.0", "messages": {"type": "array", "value": [{"class": "ERROR", "i18n": {"key": "E0000005"}, "message": "Invalid session"}]}}"#,
                Outcome(.protocolError, "E0000005"), "identify"
            ),
            (
                IDXPaths.identify, 200,
                #"{"version": "1.0.0", "stateHandle": "s", "remediation": {"type": "array", "value": [{"name": "redirect-idp", "href": "/sso/idps/1", "method": "GET", "value": []}]}}"#,
                Outcome(.protocolError, "cannot proceed at remediation redirect-idp; offered: redirect-idp"), "identify"
            ),
            (
                IDXPaths.identify, 200,
                #"{"version": "1.0.0", "stateHandle": "s", "remediation": {"type": "array", "value": [{"name": "select-enroll-profile", "href": "/idp/idx/enroll", "value": []}]}}"#,
                Outcome(.protocolError, "user not enrolled"), "identify"
            ),
            (
                IDXPaths.identify, 200, #"{"version": "1.0.0", "stateHandle": "s"}"#,
                Outcome(.protocolError, "cannot proceed at remediation (none)"), "identify"
            )
        ])
    func classification(path: String, status: Int, body: String, expected: Outcome, step: String) async throws {
        let service = TappedService(
            staging(),
            answer: { request in
                request.path == path
                    ? HTTPResponse(status: status, headers: ["Content-Type": IDXMediaType.ion], body: Array(body.utf8)) : nil
            })
        let result = await probe(flow(), service)
        #expect(result.outcome == expected)
        #expect(result.errors("okta", step, expected.kind, expected.detail) == 1)
        #expect(OktaIDXFlow.classifyOAuth(HTTPResponse(status: 503), requiring: "access_token") == Outcome(.httpError, "503"))
    }

    @Test("rate-limit waits come from the server's Date, not the client's clock")
    func rateLimitWait() {
        var response = HTTPResponse(status: 429, headers: ["Date": HTTPDate.format(epochSeconds: 1_000), "X-Rate-Limit-Reset": "1007"])
        #expect(OktaIDXFlow.rateLimitWait(response) == .seconds(7))
        response.headers.set("X-Rate-Limit-Reset", "990")
        #expect(OktaIDXFlow.rateLimitWait(response) == .zero)
        #expect(OktaIDXFlow.rateLimitWait(HTTPResponse(status: 429, headers: ["Retry-After": "3"])) == .seconds(3))
        #expect(OktaIDXFlow.rateLimitWait(HTTPResponse(status: 200)) == nil)
    }

    @Test(
        "only a path ending in /challenge/answer is the answer endpoint, its query ignored",
        arguments: [
            ("/idp/idx/challenge/answer", true), ("/idp/idx/challenge/answer?x=1", true), ("/x/challenge/answer", true),
            ("/challenge/answer", true), ("/idp/idx/challenge", false), ("/idp/idx/challenge/answers", false),
            ("/idp/idx/challenge/answer/", false), ("/idp/idx/introspect?next=/challenge/answer", false),
            ("challenge/answer", false), ("", false), ("?/challenge/answer", false)
        ])
    func answerEndpoint(target: String, isAnswer: Bool) {
        #expect(OktaIDXFlow.isAnswer(target) == isAnswer)
    }
}
