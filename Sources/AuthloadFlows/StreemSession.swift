import AuthloadCore
import AuthloadWire

/// One user's Streem session: what the flow holds between steps (the token and when it expires), and
/// the steps themselves.
struct StreemSession<C: Clock>: Sendable where C.Duration == Duration {
    typealias Step = StreemSessionFlow.Step

    let flow: StreemSessionFlow
    let context: FlowContext<C>
    let identity: UserIdentity
    private var token = ""
    /// OpenID only: the refresh token and where to use it.
    private var refreshToken = ""
    private var tokenEndpoint = ""
    /// When the token stops being accepted, and when the session does, on the flow's clock.
    private var expiresAt: C.Instant
    private var sessionEndsAt: C.Instant
    /// When a proactive refresh is due.
    private var refreshAt: C.Instant

    init(flow: StreemSessionFlow, context: FlowContext<C>, identity: UserIdentity) {
        self.flow = flow
        self.context = context
        self.identity = identity
        expiresAt = context.clock.now
        sessionEndsAt = context.clock.now
        refreshAt = context.clock.now
    }

    private var options: StreemSessionFlow.Options { flow.options }
    private var clock: C { context.clock }
    private var companyCode: String { options.companyCode ?? identity["companyCode"] ?? "acme" }

    mutating func run(hold: Duration, random: inout SplitMix64) async -> Outcome {
        let login = await logIn()
        guard login.isOK else { return login }
        planRefresh(&random)
        let start = clock.now
        let holdEnd = start.advanced(by: hold)
        var calls = 0
        while true {
            // Calls keep an absolute schedule (start + k·interval); a slot missed while refreshing is skipped, not bunched.
            let nextCall = start.advanced(by: options.callInterval * calls)
            var wake = min(nextCall, holdEnd)
            if options.refresh == .proactive { wake = min(wake, refreshAt) }
            if wake > clock.now {
                let paused = await context.pause(for: clock.now.duration(to: wake))
                guard paused.isOK else {
                    return paused.kind == .timeout ? Outcome(.timeout, "flow deadline passed during the hold (make timeouts.flow longer than hold)") : paused
                }
            }
            let now = clock.now
            if now >= holdEnd { break }
            if options.refresh == .proactive, now >= refreshAt {
                let renewed = await renew(&random)
                guard renewed.isOK else { return renewed }
                continue
            }
            if now >= nextCall {
                calls = Int(start.duration(to: now) / options.callInterval) + 1
                let called = await authorizedStep(.call, "GET", options.callPath, &random)
                guard called.isOK else { return called }
            }
        }
        return options.logout ? await authorizedStep(.logout, "POST", "/v1/sessions/logout", &random) : .ok
    }

    // MARK: Login

    private mutating func logIn() async -> Outcome {
        switch options.login {
        case .invitation:
            let code = identity["invitationCode"] ?? ""
            let redeemed = await post(.redeem, "/v1/invitations/\(PercentEncoding.encode(code))/redeem",
                                      json: ["company_code": .string(companyCode)])
            return accept(redeemed)
        case .openid:
            let configuration = await context.exchange(
                step: flow.index(.openIDConfiguration),
                HTTPRequest(method: "GET", target: "\(flow.basePath)/v1/companies/\(PercentEncoding.encode(companyCode))/openid-configuration"),
                classify: Self.expectOK)
            guard configuration.outcome.isOK else { return configuration.outcome }
            guard let endpoint = configuration.json?["token_endpoint"]?.stringValue else {
                return Outcome(.protocolError, "openid-configuration without token_endpoint")
            }
            tokenEndpoint = endpoint
            let granted = await grant(.token, [("grant_type", "password"), ("username", identity.username),
                                               ("password", identity.password), ("client_id", configuration.json?["client_id"]?.stringValue ?? "")])
            guard granted.outcome.isOK, let access = granted.access else { return granted.outcome }
            return accept(await exchangeAccessToken(access, step: .exchange))
        }
    }

    /// The token endpoint: a password or refresh grant; keeps the (rotated) refresh token.
    private mutating func grant(_ step: Step?, _ form: [(String, String)]) async -> (outcome: Outcome, access: String?, latency: Duration) {
        var request = HTTPRequest(method: "POST", target: absolute(tokenEndpoint), body: FormURLEncoding.encode(form))
        request.headers.add("Content-Type", "application/x-www-form-urlencoded")
        let result = await send(step, request) { response in
            switch response.status {
            case 200: .ok
            case 400, 401: Outcome(.authFailure, Self.oauthError(response))
            default: Outcome(.httpError, "\(response.status)")
            }
        }
        guard result.outcome.isOK else { return (result.outcome, nil, result.latency) }
        guard let access = result.json?["access_token"]?.stringValue, let refresh = result.json?["refresh_token"]?.stringValue else {
            return (Outcome(.protocolError, "token response without access_token and refresh_token"), nil, result.latency)
        }
        refreshToken = refresh
        return (.ok, access, result.latency)
    }

    private mutating func exchangeAccessToken(_ access: String, step: Step?) async -> Sent {
        var request = HTTPRequest(method: "POST", target: "\(flow.basePath)/v1/streem-tokens",
                                  body: JSONValue.object(["company_code": .string(companyCode)]).serialized())
        request.headers.add("Content-Type", "application/json")
        request.headers.add("Authorization", "Bearer \(access)")
        return await send(step, request, classify: Self.expectToken)
    }

    /// Takes the Streem token from a login or refresh response and works out its lifetimes from its claims.
    private mutating func accept(_ sent: Sent) -> Outcome {
        guard sent.outcome.isOK else { return sent.outcome }
        guard let token = sent.json?["streem_token"]?.stringValue, let claims = JWT.claims(of: token),
              let issued = claims["iat"]?.numberValue, let expires = claims["exp"]?.numberValue else {
            return Outcome(.protocolError, "no readable streem_token")
        }
        let received = clock.now
        self.token = token
        expiresAt = received.advanced(by: .seconds(expires - issued))
        let session = claims["session_exp"]?.numberValue ?? expires
        sessionEndsAt = received.advanced(by: .seconds(session - issued))
        return .ok
    }

    // MARK: Held session

    /// One authorized request as `step` (a call, the logout). A 401 is the token running out: in reactive
    /// mode an expected event, in proactive mode a failure of the step; either way the token is renewed
    /// and the request made again.
    private mutating func authorizedStep(_ step: Step, _ method: String, _ path: String, _ random: inout SplitMix64) async -> Outcome {
        let (start, result) = await context.send(authorized(method, path))
        guard let response = result.response else {
            context.record(step: flow.index(step), start: start, outcome: result.outcome)
            return result.outcome
        }
        guard response.status == 401 else {
            let outcome = Self.expectSuccess(response)
            context.record(step: flow.index(step), start: start, outcome: outcome, latency: response.timing.total)
            return outcome
        }
        if options.refresh == .reactive {
            context.record(step: flow.index(.expired), start: start, outcome: .ok, latency: response.timing.total)
        } else {
            context.record(step: flow.index(step), start: start, outcome: Outcome(.authFailure, "401 (token expired before its refresh)"),
                           latency: response.timing.total)
        }
        let renewed = await renew(&random)
        guard renewed.isOK else { return renewed }
        return await context.exchange(step: flow.index(step), authorized(method, path)) { response in
            response.status == 401 ? Outcome(.authFailure, "401 after a refresh") : Self.expectSuccess(response)
        }.outcome
    }

    static func expectSuccess(_ response: HTTPResponse) -> Outcome {
        (200..<300).contains(response.status) ? .ok : Outcome(response.status == 401 || response.status == 403 ? .authFailure : .httpError, "\(response.status)")
    }

    /// Renews the token within the session, or logs in again once the session is at its end.
    private mutating func renew(_ random: inout SplitMix64) async -> Outcome {
        if sessionEndsAt <= clock.now.advanced(by: options.refreshLead) {
            return await relogin(&random)
        }
        flow.refreshes.enter()
        defer { flow.refreshes.leave() }
        let start = clock.now
        var outcome: Outcome
        var latency = Duration.zero
        switch options.login {
        case .invitation:
            var request = authorized("POST", "/v1/streem-tokens/refresh")
            request.headers.add("Content-Type", "application/json")
            let sent = await send(nil, request, classify: Self.expectToken)
            latency = sent.latency
            if sent.response?.status == 401 {
                // The server ended the session early (revoked, or its clock is ahead): only a new login helps.
                return await relogin(&random)
            }
            outcome = accept(sent)
        case .openid:
            let granted = await grant(nil, [("grant_type", "refresh_token"), ("refresh_token", refreshToken), ("client_id", "streem-authload")])
            latency = granted.latency
            guard granted.outcome.isOK, let access = granted.access else {
                context.record(step: flow.index(.refresh), start: start, outcome: granted.outcome, latency: latency)
                return granted.outcome
            }
            let exchanged = await exchangeAccessToken(access, step: nil)
            latency += exchanged.latency
            outcome = accept(exchanged)
        }
        context.record(step: flow.index(.refresh), start: start, outcome: outcome, latency: latency)
        if outcome.isOK { planRefresh(&random) }
        return outcome
    }

    private mutating func relogin(_ random: inout SplitMix64) async -> Outcome {
        let start = clock.now
        let outcome = await logIn()
        context.record(step: flow.index(.relogin), start: start, outcome: outcome)
        if outcome.isOK { planRefresh(&random) }
        return outcome
    }

    /// Proactive refreshes come `refreshLead` plus a random share of `refreshJitter` before `exp`; a token
    /// too short-lived for that is refreshed halfway through its life instead.
    private mutating func planRefresh(_ random: inout SplitMix64) {
        let now = clock.now
        let lifetime = now.duration(to: expiresAt)
        let jitter = random.duration(in: ThinkTime(min: .zero, max: options.refreshJitter))
        let early = options.refreshLead + jitter
        refreshAt = early < lifetime ? expiresAt.advanced(by: .zero - early) : now.advanced(by: lifetime / 2)
    }

    // MARK: Helpers

    /// A response, its outcome, its JSON body and the transport's latency.
    struct Sent {
        var outcome: Outcome
        var response: HTTPResponse?
        var json: JSONValue? { response.flatMap { try? JSONValue.parse($0.body) } }
        var latency: Duration { response?.timing.total ?? .zero }
    }

    /// Sends `request`, recorded as `step` unless it is part of a refresh (nil), which is timed as a whole.
    private func send(_ step: Step?, _ request: HTTPRequest, classify: (HTTPResponse) -> Outcome) async -> Sent {
        if let step {
            let result = await context.exchange(step: flow.index(step), request, classify: classify)
            return Sent(outcome: result.outcome, response: result.response)
        }
        let (_, result) = await context.send(request)
        return Sent(outcome: result.response.map(classify) ?? result.outcome, response: result.response)
    }

    private func post(_ step: Step, _ path: String, json: JSONValue) async -> Sent {
        var request = HTTPRequest(method: "POST", target: flow.basePath + path, body: json.serialized())
        request.headers.add("Content-Type", "application/json")
        return await send(step, request, classify: Self.expectToken)
    }

    private func authorized(_ method: String, _ path: String) -> HTTPRequest {
        var request = HTTPRequest(method: method, target: flow.basePath + path)
        request.headers.add("Authorization", "Bearer \(token)")
        return request
    }

    /// The token endpoint may be given as a path or an absolute URL on the same target.
    private func absolute(_ endpoint: String) -> String {
        if endpoint.hasPrefix("/") { return flow.basePath + endpoint }
        let parts = endpoint.split(separator: "/", maxSplits: 3, omittingEmptySubsequences: false)
        // "https:", "", "host", "path…"
        guard parts.count == 4, parts[0].hasSuffix(":"), parts[1].isEmpty else { return endpoint }
        return "/" + parts[3]
    }

    static func expectOK(_ response: HTTPResponse) -> Outcome {
        response.status == 200 ? .ok : response.status == 404 ? Outcome(.httpError, "404 unknown company") : Outcome(.httpError, "\(response.status)")
    }

    static func expectToken(_ response: HTTPResponse) -> Outcome {
        switch response.status {
        case 200: .ok
        case 401, 403: Outcome(.authFailure, "\(response.status)")
        case 404: Outcome(.authFailure, "404 unknown invitation")
        case 410: Outcome(.authFailure, "410 invitation already redeemed")
        default: Outcome(.httpError, "\(response.status)")
        }
    }

    /// The OAuth `error` code of a 400/401 (never its description, which might echo input).
    static func oauthError(_ response: HTTPResponse) -> String {
        let code = (try? JSONValue.parse(response.body))?["error"]?.stringValue ?? ""
        return code.isEmpty ? "\(response.status)" : "\(response.status) \(code)"
    }
}

private extension StepResult {
    var json: JSONValue? { response.flatMap { try? JSONValue.parse($0.body) } }
}
