import AuthloadCore
import AuthloadWire

/// One user's Streem session: what the flow holds between steps (the token and when it expires), and
/// the steps themselves.
struct StreemSession<C: Clock>: Sendable where C.Duration == Duration {
    typealias Step = StreemSessionFlow.Step

    let flow: StreemSessionFlow
    let context: FlowContext<C>
    let identity: UserIdentity
    /// The `Authorization` header of the current token, made once per token rather than once per call: each call's
    /// request shares its storage.
    private var authorization: HTTPHeaders = ["Authorization": ""]
    /// OpenID only: the refresh token, where to use it, and the client the company's configuration names
    /// (a refresh token is bound to the client it was issued to).
    private var refreshToken = ""
    private var tokenEndpoint = ""
    private var clientID = ""
    /// When the target turned out to have no refresh endpoint: the session then ends with its token.
    private var refreshUnavailableSince: C.Instant?
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
        var holdEnd = start.advanced(by: hold)
        var calls = 0
        while true {
            if refreshUnavailableSince != nil { holdEnd = min(holdEnd, expiresAt) }
            // Calls keep an absolute schedule (start + k·interval); a slot missed while refreshing is skipped, not bunched.
            let nextCall = start.advanced(by: options.callInterval * calls)
            var wake = min(nextCall, holdEnd)
            let refreshes = options.refresh == .proactive && refreshUnavailableSince == nil
            if refreshes { wake = min(wake, refreshAt) }
            if wake > clock.now {
                let paused = await context.pause(for: clock.now.duration(to: wake))
                guard paused.isOK else {
                    return paused.kind == .timeout
                        ? Outcome(.timeout, "flow deadline passed during the hold (make timeouts.flow longer than hold)") : paused
                }
            }
            let now = clock.now
            if now >= holdEnd { break }
            if refreshes, now >= refreshAt {
                let renewed = await renew(&random)
                guard renewed.isOK else { return renewed }
                continue
            }
            if now >= nextCall {
                calls = Int(start.duration(to: now) / options.callInterval) + 1
                let called = await authorizedStep(.call, "GET", flow.callTarget, &random)
                guard called.isOK else { return called }
            }
        }
        if options.logout, !sessionOver {
            let loggedOut = await authorizedStep(.logout, "POST", flow.logoutTarget, &random)
            guard loggedOut.isOK else { return loggedOut }
        }
        if sessionOver, let since = refreshUnavailableSince {
            context.record(step: flow.index(.sessionEnded), start: since, outcome: .ok)
        }
        return .ok
    }

    /// The token has expired and the target offers no way to renew it.
    private var sessionOver: Bool { refreshUnavailableSince != nil && clock.now >= expiresAt }

    // MARK: Login

    private mutating func logIn() async -> Outcome {
        switch options.login {
        case .invitation:
            let code = identity["invitationCode"] ?? ""
            let redeemed = await post(
                .redeem, options.redeemPath.filling("{code}", with: PercentEncoding.encode(code)),
                json: ["company_code": .string(companyCode)])
            return accept(redeemed)
        case .openid:
            let configuration = await context.exchange(
                step: flow.index(.openIDConfiguration),
                HTTPRequest(
                    method: "GET",
                    target: flow.basePath
                        + options.configurationPath.filling("{company}", with: PercentEncoding.encode(companyCode))),
                classify: Self.expectOK)
            guard configuration.outcome.isOK else { return configuration.outcome }
            guard let endpoint = configuration.response?.jsonString("token_endpoint"),
                let client = configuration.response?.jsonString("client_id")
            else {
                return Outcome(.protocolError, "openid-configuration without token_endpoint and client_id")
            }
            tokenEndpoint = endpoint
            clientID = client
            let granted = await grant(
                .token,
                [
                    ("grant_type", "password"), ("username", identity.username),
                    ("password", identity.password), ("client_id", clientID)
                ])
            guard granted.sent.outcome.isOK, let access = granted.access else { return granted.sent.outcome }
            return accept(await exchangeAccessToken(access, step: .exchange))
        }
    }

    /// The token endpoint: a password or refresh grant; keeps the (rotated) refresh token.
    private mutating func grant(_ step: Step?, _ form: [(String, String)]) async -> (sent: Sent, access: String?) {
        var request = HTTPRequest(method: "POST", target: absolute(tokenEndpoint), body: FormURLEncoding.encode(form))
        request.headers.add("Content-Type", "application/x-www-form-urlencoded")
        var sent = await send(step, request) { response in
            switch response.status {
            case 200: .ok
            case 400, 401: Outcome(.authFailure, Self.said(response))
            default: Outcome(.httpError, Self.said(response))
            }
        }
        guard sent.outcome.isOK else { return (sent, nil) }
        guard let access = sent.response?.jsonString("access_token"), let refresh = sent.response?.jsonString("refresh_token") else {
            sent.outcome = Outcome(.protocolError, "token response without access_token and refresh_token")
            return (sent, nil)
        }
        refreshToken = refresh
        return (sent, access)
    }

    private mutating func exchangeAccessToken(_ access: String, step: Step?) async -> Sent {
        var request = HTTPRequest(
            method: "POST", target: flow.basePath + options.exchangePath,
            body: JSONValue.object(["company_code": .string(companyCode)]).serialized())
        request.headers.add("Content-Type", "application/json")
        request.headers.add("Authorization", "Bearer \(access)")
        return await send(step, request, classify: Self.expectToken)
    }

    /// Takes the Streem token from a login or refresh response and works out its lifetimes from its claims.
    private mutating func accept(_ sent: Sent) -> Outcome {
        guard sent.outcome.isOK else { return sent.outcome }
        guard let token = sent.response?.jsonString("streem_token"), let claims = JWT.claims(of: token),
            let issued = claims["iat"]?.numberValue, let expires = claims["exp"]?.numberValue
        else {
            return Outcome(.protocolError, "no readable streem_token")
        }
        let received = clock.now
        authorization = ["Authorization": "Bearer " + token]
        expiresAt = received.advanced(by: .seconds(expires - issued))
        let session = claims["session_exp"]?.numberValue ?? expires
        sessionEndsAt = received.advanced(by: .seconds(session - issued))
        return .ok
    }

    // MARK: Held session

    /// One authorized request as `step` (a call, the logout). A 401 is the token running out: in reactive
    /// mode an expected event, in proactive mode a failure of the step; either way the token is renewed
    /// and the request made again.
    private mutating func authorizedStep(_ step: Step, _ method: String, _ target: String, _ random: inout SplitMix64) async -> Outcome {
        let (start, result) = await context.send(authorized(method, target))
        // The response's fields read in place: bound to a name, the response was copied whole (a retain and a release
        // of each of its buffers) for every call of a held session.
        guard let status = result.response?.status, let latency = result.response?.timing.total else {
            context.record(step: flow.index(step), start: start, outcome: result.outcome)
            return result.outcome
        }
        guard status == 401 else {
            let outcome = (200..<300).contains(status) ? Outcome.ok : result.response.map(Self.expectSuccess) ?? result.outcome
            context.record(step: flow.index(step), start: start, outcome: outcome, latency: latency)
            return outcome
        }
        if options.refresh == .reactive {
            context.record(step: flow.index(.expired), start: start, outcome: .ok, latency: latency)
        } else {
            context.record(
                step: flow.index(step), start: start, outcome: Outcome(.authFailure, "401 (token expired before its refresh)"),
                latency: latency)
        }
        let renewed = await renew(&random)
        guard renewed.isOK else { return renewed }
        if refreshUnavailableSince != nil { return .ok }
        return await context.exchange(step: flow.index(step), authorized(method, target)) { response in
            response.status == 401 ? Outcome(.authFailure, "401 after a refresh") : Self.expectSuccess(response)
        }.outcome
    }

    static func expectSuccess(_ response: HTTPResponse) -> Outcome {
        (200..<300).contains(response.status)
            ? .ok : Outcome(response.status == 401 || response.status == 403 ? .authFailure : .httpError, said(response))
    }

    /// How a refresh came out: renewed (or failed, recorded as the `refresh` step), refused so that only a new
    /// login helps, or impossible because the target has no refresh endpoint.
    private enum Renewal {
        case done(Outcome, latency: Duration?)
        case refused
        case unavailable
    }

    /// Renews the token within the session, or logs in again once the session is at its end or the server
    /// refuses the refresh (docs/protocols.md, Streem: `invalid_grant` → full re-login). One refusal leads to
    /// one re-login; only a failed re-login fails the flow.
    private mutating func renew(_ random: inout SplitMix64) async -> Outcome {
        if sessionEndsAt <= clock.now.advanced(by: options.refreshLead) {
            return await relogin(&random)
        }
        let start = clock.now
        flow.refreshes.enter()
        let renewal = await refresh()
        flow.refreshes.leave()
        switch renewal {
        case .refused:
            return await relogin(&random)
        case .unavailable:
            refreshUnavailableSince = start
            return .ok
        case .done(let outcome, let latency):
            // No latency: a request got no response, and the refresh took what the clock says.
            context.record(step: flow.index(.refresh), start: start, outcome: outcome, latency: latency)
            if outcome.isOK { planRefresh(&random) }
            return outcome
        }
    }

    private mutating func refresh() async -> Renewal {
        switch options.login {
        case .invitation:
            var request = authorized("POST", flow.refreshTarget)
            request.headers.add("Content-Type", "application/json")
            let sent = await send(nil, request, classify: Self.expectToken)
            switch sent.response?.status {
            // The server ended the session early (revoked, or its clock is ahead): only a new login helps.
            case 401: return .refused
            case 404, 405: return .unavailable
            default: return .done(accept(sent), latency: sent.latency)
            }
        case .openid:
            let granted = await grant(nil, [("grant_type", "refresh_token"), ("refresh_token", refreshToken), ("client_id", clientID)])
            if let response = granted.sent.response, response.status == 400, Self.errorKey(response) == "invalid_grant" {
                return .refused
            }
            guard let access = granted.access else { return .done(granted.sent.outcome, latency: granted.sent.latency) }
            let exchanged = await exchangeAccessToken(access, step: nil)
            let latency = exchanged.latency.flatMap { exchange in granted.sent.latency.map { $0 + exchange } }
            return .done(accept(exchanged), latency: latency)
        }
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

    /// A response, its outcome and the transport's latency.
    struct Sent {
        var outcome: Outcome
        var response: HTTPResponse?
        /// The transport's measure; nil when no response came.
        var latency: Duration? { response?.timing.total }
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

    /// `method` on `target` (the base path included) with the current token.
    private func authorized(_ method: String, _ target: String) -> HTTPRequest {
        HTTPRequest(method: method, target: target, headers: authorization)
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
        response.status == 200 ? .ok : Outcome(.httpError, said(response))
    }

    static func expectToken(_ response: HTTPResponse) -> Outcome {
        switch response.status {
        case 200: .ok
        case 400, 401, 403, 404, 410: Outcome(.authFailure, said(response))
        default: Outcome(.httpError, said(response))
        }
    }

    /// What a response said, for an error detail: its status, and its `error` key when that is a short code
    /// or phrase (`invalid_grant`, `unknown invitation`). Never its description, which might echo input, and
    /// never a guess at what the status means: a 404 from a server without the route reads `404`.
    static func said(_ response: HTTPResponse) -> String {
        errorKey(response).map { "\(response.status) \($0)" } ?? "\(response.status)"
    }

    /// The body's `error` string when it is a short code or phrase: letters, spaces, `_`, `-` and `.` only, so
    /// that a path, a number or an echoed value cannot split the error breakdown or leak into the report.
    static func errorKey(_ response: HTTPResponse) -> String? {
        guard let key = response.jsonString("error"), !key.isEmpty, key.count <= 64,
            key.unicodeScalars.allSatisfy({ $0.properties.isAlphabetic && $0.isASCII || " _-.".unicodeScalars.contains($0) })
        else { return nil }
        return key
    }
}
