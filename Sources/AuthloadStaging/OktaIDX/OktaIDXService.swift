import AuthloadCore
import AuthloadWire
import Foundation

/// The server side of Okta Identity Engine embedded login (docs/protocols.md, Okta IDX): interact, the IDX remediation
/// endpoints answering ION, and the token endpoint.
///
/// `POST {issuer}/v1/interact` stores a PKCE challenge under an interaction handle; `POST /idp/idx/introspect`
/// opens a transaction (its state handle) offering `identify`; then the policy (``Policy``) asks for the password
/// and one factor — a code by email, SMS or voice, or the security question — in its own order and shape, until
/// `successWithInteractionCode` hands out an `interaction_code`, redeemable once, with the matching code
/// verifier, at `{issuer}/v1/token`.
/// Ours: the code sent "by email or SMS" is `passcode` from the options, so a load tool can answer it.
///
/// The behaviours of §B.6 are options: the policy shape, the factors offered, a per-endpoint request budget
/// answered 429 with Okta's `X-Rate-Limit-*` headers (ION on `/challenge/answer`), a share of answers
/// rejected as `api.authn.error.PASSCODE_INVALID`, state handles that expire, slow email/SMS dispatch, and
/// enrollment the client cannot do. "Now" comes from `now` (time since the Unix epoch), the wall clock by
/// default, so virtual-time tests see exact `Date`, reset and expiry values. Every table is bounded.
public final class OktaIDXService: Sendable {
    public let options: Options
    let now: WallClock
    private let state: Locked<State>
    private let random: Locked<SplitMix64>
    /// The ION templates made so far, one a shape of answer: a few dozen at most, since options are fixed.
    let templates = Locked<[IONShape: IONTemplate]>([:])
    /// The last `Date` header written, and its second.
    private let lastDate = Locked<(seconds: Int64, text: String)>((.min, ""))
    /// The second of the last expiry written, and its ISO 8601 text up to the milliseconds.
    private let lastExpirySecond = Locked<(seconds: Int64, text: String)>((.min, ""))
    /// The last origin made from a `Host` header, and the host.
    private let lastOrigin = Locked<(host: String?, origin: String)>((nil, ""))
    /// `options.paths.interact` and `.token`, which are built each time they are read.
    private let interactPath: String
    private let tokenPath: String
    /// The answers of interact and token, whose shapes the options fix: filled with a handle or tokens, where each
    /// was built as a tree and serialized.
    private let interactTemplate: IONTemplate
    private let tokenTemplate: IONTemplate

    struct State {
        var interactions: ExpiringTable<OktaIDXInteraction>
        var transactions: ExpiringTable<OktaIDXTransaction>
        var grants: ExpiringTable<OktaIDXGrant>
        /// Requests per rate-limited path in its current window: one entry per path, never more.
        var windows: [String: (window: Int64, count: Int)] = [:]
    }

    /// Where the IDX endpoints this service answers lie.
    private static let idxRoutes = IDXPaths.idxPrefix + "/"

    /// The most paths the rate limiter keeps counts for.
    static let rateLimitedPathCapacity = 64

    /// - Parameters:
    ///   - now: the time since the Unix epoch; tests derive it from their manual clock.
    ///   - capacity: the most entries each table (interaction handles, state handles, codes) holds.
    public init(
        options: Options, seed: UInt64 = 13, capacity: Int = 100_000,
        now: @escaping WallClock = WallTime.now
    ) {
        self.options = options
        self.now = now
        interactPath = options.paths.interact
        tokenPath = options.paths.token
        interactTemplate = IONTemplate(serializing: Self.interactTree(handle: IONTemplate.marker(.handle)))
        tokenTemplate = IONTemplate(
            serializing: Self.tokenTree(
                lifetime: options.tokenLifetime, access: IONTemplate.marker(.accessToken), refresh: IONTemplate.marker(.refreshToken),
                id: IONTemplate.marker(.idToken)))
        state = Locked(
            State(
                interactions: ExpiringTable(capacity: capacity), transactions: ExpiringTable(capacity: capacity),
                grants: ExpiringTable(capacity: capacity)))
        random = Locked(SplitMix64(seed: seed))
    }

    /// Entries held: interaction handles, transactions, unredeemed codes.
    public var tableSizes: (interactions: Int, transactions: Int, grants: Int) {
        state.withLock { ($0.interactions.count, $0.transactions.count, $0.grants.count) }
    }

    /// Paths the rate limiter holds a count for.
    var rateLimitedPaths: Int { state.withLock { $0.windows.count } }

    // MARK: Routing

    /// Answers the request if it is for this service, nil otherwise.
    func respond(to request: HTTPRequest) -> ServiceReply? { respond(to: request, path: request.path) }

    /// ``respond(to:)`` with the request's path, which the server has found already.
    func respond(to request: HTTPRequest, path: Substring) -> ServiceReply? {
        guard let endpoint = endpoint(of: path) else { return nil }
        let time = now()
        var latency = random.withLock { options.latency.sample(using: &$0) }
        var response: HTTPResponse
        if let limited = rateLimited(path, request: request, at: time) {
            response = limited
        } else if request.method != "POST" {
            response = .methodNotAllowed("POST")
        } else {
            switch endpoint {
            case .interact: response = interact(request, at: time)
            case .token: response = token(request, at: time)
            case .introspect: response = introspect(request, at: time)
            case .remediation(let call):
                let (answer, dispatch) = remediate(call, request: request, at: time)
                response = answer
                latency += dispatch
            }
        }
        response.headers.add("Date", date(epochSeconds: time.components.seconds))
        response.headers.add("x-okta-request-id", random.withLock { $0.hex(20) })
        return ServiceReply(response, after: latency)
    }

    /// What a request is for, found from its path once.
    private enum Endpoint {
        case interact, token, introspect
        case remediation(Remediation)
    }

    /// The IDX calls that move a transaction on; `other` is any other path under the IDX prefix, which the
    /// transaction's state refuses.
    enum Remediation {
        case identify, answer, challenge, enroll, resend, poll, cancel, other
    }

    /// The endpoint `path` names, nil when it is not this service's. The path stays a `Substring`: made a `String`, every
    /// IDX path (longer than a small string's 15 bytes) cost an allocation a request.
    private func endpoint(of path: Substring) -> Endpoint? {
        if path == interactPath { return .interact }
        if path == tokenPath { return .token }
        // The prefix compared as bytes, and as characters (`hasPrefix`, slower) only where a byte after it is not ASCII: no
        // ASCII byte joins the `/` before it into one character, any other might.
        guard path.startsWith(Self.idxRoutes) else { return nil }
        if let next = path.utf8.dropFirst(Self.idxRoutes.utf8.count).first, next >= 0x80, !path.hasPrefix(Self.idxRoutes) { return nil }
        if path == IDXPaths.introspect { return .introspect }
        return .remediation(Self.remediations.first { path == $0.path }?.call ?? .other)
    }

    private static let remediations: [(path: String, call: Remediation)] = [
        (IDXPaths.identify, .identify), (IDXPaths.answer, .answer), (IDXPaths.challenge, .challenge), (IDXPaths.enroll, .enroll),
        (IDXPaths.resend, .resend), (IDXPaths.poll, .poll), (IDXPaths.cancel, .cancel)
    ]

    /// The `Date` header for a second since the epoch, formatted once a second: answers come many a second, and
    /// formatting each was a tenth of the service's work.
    private func date(epochSeconds: Int64) -> String {
        if let text = lastDate.withLock({ $0.seconds == epochSeconds ? $0.text : nil }) { return text }
        let text = HTTPDate.format(epochSeconds: epochSeconds)
        lastDate.withLock { $0 = (epochSeconds, text) }
        return text
    }

    /// `time` as ION dates it (``iso8601(_:)``), the date and time of its second formatted once a second: a transaction
    /// starts at nearly every introspect, and formatting each expiry whole was a twentieth of the service's work.
    func expiryText(_ time: Duration) -> String {
        let milliseconds = time.components.seconds * 1000 + time.components.attoseconds / 1_000_000_000_000_000
        // Floored, as HTTPDate divides: the milliseconds of an instant before the epoch count up from its second.
        let seconds = milliseconds >= 0 ? milliseconds / 1000 : (milliseconds - 999) / 1000
        let millis = milliseconds - seconds * 1000
        let second =
            lastExpirySecond.withLock({ $0.seconds == seconds ? $0.text : nil })
            ?? {
                // Up to the milliseconds: `…T08:10:00.`, from the second's own text, which ends in `000Z`.
                let text = String(HTTPDate.iso8601(epochMilliseconds: seconds * 1000).dropLast(4))
                lastExpirySecond.withLock { $0 = (seconds, text) }
                return text
            }()
        var text = second
        // `1042` → `042`: three digits, made without storage of their own.
        text.append(contentsOf: String(millis + 1000).dropFirst())
        text.append("Z")
        return text
    }

    // MARK: OAuth endpoints

    private func interact(_ request: HTTPRequest, at time: Duration) -> HTTPResponse {
        // The form's fields read in one pass, the first of a repeated name winning, only these made strings.
        let form = FormURLEncoding.firstValues(named: Self.interactFields, in: request.body)
        let (clientID, challenge, method) = (form[0], form[1], form[2])
        if let expected = options.clientID, clientID != expected {
            return Self.oauthError(401, "invalid_client", "Client authentication failed.")
        }
        guard let challenge, !challenge.isEmpty, method == "S256" else {
            return Self.oauthError(
                400, "invalid_request", "PKCE code challenge is required when the token endpoint authentication method is 'NONE'.")
        }
        let handle = random.withLock { $0.hex(24) }
        let expiry = time + options.stateHandleLifetime
        state.withLock {
            $0.interactions.set(handle, OktaIDXInteraction(codeChallenge: challenge, expiresAt: expiry), expiresAt: expiry, now: time)
        }
        return HTTPResponse(
            status: 200, headers: HTTPResponse.jsonHeaders, body: interactTemplate.filled(IONTemplate.Values(handle: handle)))
    }

    /// The fields interact and the token endpoint read, in the order they unpack them.
    private static let interactFields = ["client_id", "code_challenge", "code_challenge_method"]
    private static let tokenFields = ["grant_type", "client_id", "interaction_code", "code_verifier"]

    /// What interact answers: the interaction handle.
    static func interactTree(handle: String) -> JSONValue {
        ["interaction_handle": .string(handle)]
    }

    private func token(_ request: HTTPRequest, at time: Duration) -> HTTPResponse {
        // The form's fields read in one pass, the first of a repeated name winning, only these made strings.
        let form = FormURLEncoding.firstValues(named: Self.tokenFields, in: request.body)
        let (grantType, clientID, code, verifier) = (form[0], form[1], form[2] ?? "", form[3] ?? "")
        guard grantType == "interaction_code" else {
            return Self.oauthError(400, "unsupported_grant_type", "The grant_type is not supported.")
        }
        if let expected = options.clientID, clientID != expected {
            return Self.oauthError(401, "invalid_client", "Client authentication failed.")
        }
        // Single use: the code is gone whether or not the rest checks out, as OAuth servers do.
        let grant = state.withLock { state -> OktaIDXGrant? in
            let grant = state.grants.value(code, now: time)
            state.grants.remove(code)
            return grant
        }
        guard let grant else { return Self.oauthError(400, "invalid_grant", "The interaction code is invalid or has expired.") }
        guard (43...128).contains(verifier.utf8.count),
            Base64.urlEncoded(Digest.sha256(Array(verifier.utf8))) == grant.codeChallenge
        else {
            return Self.oauthError(400, "invalid_grant", "PKCE verification failed.")
        }
        let (access, refresh, id) = random.withLock { ($0.hex(64), $0.hex(48), $0.hex(64)) }
        let values = IONTemplate.Values(accessToken: access, refreshToken: refresh, idToken: id)
        return HTTPResponse(status: 200, headers: HTTPResponse.jsonHeaders, body: tokenTemplate.filled(values))
    }

    /// What the token endpoint answers a redeemed code with.
    static func tokenTree(lifetime: Duration, access: String, refresh: String, id: String) -> JSONValue {
        [
            "token_type": "Bearer", "expires_in": .number(Double(lifetime.components.seconds)), "access_token": .string(access),
            "scope": "openid profile offline_access", "refresh_token": .string(refresh), "id_token": .string(id)
        ]
    }

    static func oauthError(_ status: Int, _ error: String, _ description: String) -> HTTPResponse {
        .json(status: status, ["error": .string(error), "error_description": .string(description)])
    }

    // MARK: IDX

    private func introspect(_ request: HTTPRequest, at time: Duration) -> HTTPResponse {
        let body = IDXRequestBody(request.body)
        let origin = origin(of: request)
        if let handle = body.stateHandle {
            guard let transaction = state.withLock({ $0.transactions.value(handle, now: time) }) else { return expired(origin) }
            return ion(transaction, handle: handle, origin: origin)
        }
        let interactionHandle = body.interactionHandle ?? ""
        let newHandle = random.withLock { "02" + $0.hex(40) }
        let expiry = time + options.stateHandleLifetime
        let expiryText = expiryText(expiry)
        let opened: (String, OktaIDXTransaction)? = state.withLock { state in
            guard var interaction = state.interactions.value(interactionHandle, now: time) else { return nil }
            if let handle = interaction.stateHandle, let transaction = state.transactions.value(handle, now: time) {
                return (handle, transaction)
            }
            let transaction = OktaIDXTransaction(codeChallenge: interaction.codeChallenge, expiresAt: expiry, expiresAtText: expiryText)
            interaction.stateHandle = newHandle
            state.interactions.set(interactionHandle, interaction, expiresAt: interaction.expiresAt, now: time)
            state.transactions.set(newHandle, transaction, expiresAt: transaction.expiresAt, now: time)
            return (newHandle, transaction)
        }
        guard let (handle, transaction) = opened else { return expired(origin) }
        return ion(transaction, handle: handle, origin: origin)
    }

    /// A remediation call: the transaction its `stateHandle` names moves on, or the call is refused in ION.
    ///
    /// - Returns: the answer and any extra time it takes (sending the email or SMS).
    private func remediate(_ call: Remediation, request: HTTPRequest, at time: Duration) -> (HTTPResponse, Duration) {
        let body = IDXRequestBody(request.body)
        let origin = origin(of: request)
        let handle = body.stateHandle ?? ""
        guard var transaction = state.withLock({ $0.transactions.value(handle, now: time) }) else { return (expired(origin), .zero) }
        let passcode = body.passcode ?? ""
        var dispatch = Duration.zero
        let response: HTTPResponse
        let refused = { (status: Int, message: IDXMessage) in
            (self.ion(transaction, handle: handle, origin: origin, status: status, passcodeError: message), Duration.zero)
        }
        switch (call, transaction.phase) {
        case (.identify, .identify):
            let identifier = body.identifier ?? ""
            guard !identifier.isEmpty else { return (invalid(transaction, handle: handle, origin: origin), .zero) }
            transaction.username = identifier
            if options.policy == .singleForm {
                guard passwordMatches(passcode) else { return refused(401, Self.incorrectPassword) }
                transaction.passwordDone = true
            }
            transaction.phase = advance(transaction)
            response = store(transaction, handle: handle, origin: origin)
        case (.answer, .password):
            guard passwordMatches(passcode) else { return refused(401, Self.incorrectPassword) }
            transaction.passwordDone = true
            response = proceed(transaction)
        case (.answer, .question):
            guard body.questionKey == Self.questionKey, answerMatches(body.answer ?? "") else {
                return refused(400, Self.answerInvalid)
            }
            transaction.factorDone = true
            response = proceed(transaction)
        case (.challenge, .select) where !options.requireEnrollment,
            (.enroll, .select) where options.requireEnrollment,
            (.challenge, .verificationData):
            guard let phase = picked(id: body.authenticatorID ?? "", method: body.methodType, in: transaction) else {
                return (invalid(transaction, handle: handle, origin: origin), .zero)
            }
            transaction.phase = phase
            if case .code = phase { dispatch = random.withLock { options.dispatchLatency.sample(using: &$0) } }
            response = store(transaction, handle: handle, origin: origin)
        case (.resend, .code):
            dispatch = random.withLock { options.dispatchLatency.sample(using: &$0) }
            response = ion(transaction, handle: handle, origin: origin)
        case (.poll, .code):
            response = ion(transaction, handle: handle, origin: origin)
        case (.answer, .code):
            let rejected = random.withLock { $0.chance(options.wrongPasscodeRate) }
            guard !rejected, passcode == options.passcode else {
                transaction.failedPasscodes += 1
                state.withLock { $0.transactions.set(handle, transaction, expiresAt: transaction.expiresAt, now: time) }
                return (ion(transaction, handle: handle, origin: origin, status: 400, passcodeError: Self.passcodeInvalid), .zero)
            }
            transaction.factorDone = true
            response = proceed(transaction)
        case (.cancel, _):
            // A fresh identify with a new state handle (docs/protocols.md, Okta IDX).
            let expiry = time + options.stateHandleLifetime
            let fresh = OktaIDXTransaction(codeChallenge: transaction.codeChallenge, expiresAt: expiry, expiresAtText: expiryText(expiry))
            let newHandle = random.withLock { "02" + $0.hex(40) }
            state.withLock {
                $0.transactions.remove(handle)
                $0.transactions.set(newHandle, fresh, expiresAt: fresh.expiresAt, now: time)
            }
            response = ion(fresh, handle: newHandle, origin: origin)
        default:
            response = invalid(transaction, handle: handle, origin: origin)
        }
        return (response, dispatch)

        func store(_ transaction: OktaIDXTransaction, handle: String, origin: String) -> HTTPResponse {
            state.withLock { $0.transactions.set(handle, transaction, expiresAt: transaction.expiresAt, now: time) }
            return ion(transaction, handle: handle, origin: origin)
        }

        /// One proof more: on to what the policy asks next, or the interaction code when nothing is left.
        func proceed(_ transaction: OktaIDXTransaction) -> HTTPResponse {
            var transaction = transaction
            guard !(transaction.passwordDone && transaction.factorDone) else {
                return succeed(transaction, handle: handle, origin: origin, at: time)
            }
            transaction.phase = advance(transaction)
            return store(transaction, handle: handle, origin: origin)
        }
    }

    /// What the policy asks for next, given what the user has proven (both proven is handled by the caller).
    private func advance(_ transaction: OktaIDXTransaction) -> OktaIDXTransaction.Phase {
        switch options.policy {
        case .identifierFirst, .singleForm: transaction.passwordDone ? .select : .password
        case .selectFirst, .factorFirst: transaction.factorDone ? .password : .select
        case .securityQuestion: transaction.passwordDone ? .question : .password
        }
    }

    /// The phase an `authenticator` answer to a select (or verification-data) form leads to; nil when it picks
    /// nothing on offer. A phone picked without a method is asked which one; under `select-first` the password
    /// is on offer until it is given.
    private func picked(id: String, method: String?, in transaction: OktaIDXTransaction) -> OktaIDXTransaction.Phase? {
        if transaction.phase == .select, id == Self.passwordAuthenticatorID {
            return options.policy == .selectFirst && !transaction.passwordDone && method ?? "password" == "password" ? .password : nil
        }
        if id == Self.authenticatorID("email") {
            return options.factors.contains("email") && method ?? "email" == "email" && transaction.phase == .select
                ? .code(method: "email", enrolling: options.requireEnrollment) : nil
        }
        guard id == Self.authenticatorID("sms"), !phoneMethods.isEmpty else { return nil }
        guard let method else { return transaction.phase == .select && !options.requireEnrollment ? .verificationData : nil }
        return phoneMethods.contains(method) ? .code(method: method, enrolling: options.requireEnrollment) : nil
    }

    /// The phone's methods on offer (`sms`, `voice`), in the options' order.
    var phoneMethods: [String] { options.factors.filter { $0 != "email" } }

    private func answerMatches(_ answer: String) -> Bool {
        options.securityAnswer.map { $0 == answer } ?? !answer.isEmpty
    }

    /// The code was right: the transaction ends and its interaction code waits for the token request.
    private func succeed(_ transaction: OktaIDXTransaction, handle: String, origin: String, at time: Duration) -> HTTPResponse {
        let code = random.withLock { $0.hex(43) }
        state.withLock { state in
            state.transactions.remove(handle)
            let grant = OktaIDXGrant(
                codeChallenge: transaction.codeChallenge, username: transaction.username,
                expiresAt: time + options.interactionCodeLifetime)
            state.grants.set(code, grant, expiresAt: grant.expiresAt, now: time)
        }
        return success(transaction, code: code, origin: origin)
    }

    private func passwordMatches(_ password: String) -> Bool {
        options.password.map { $0 == password } ?? !password.isEmpty
    }

    /// The origin hrefs start with: the configured one, or the one the client addressed.
    private func origin(of request: HTTPRequest) -> String {
        if let origin = options.origin { return origin }
        guard let host = request.headers["Host"] else { return "" }
        // Clients address one host: its origin is written once, not at every answer.
        if let known = lastOrigin.withLock({ $0.host == host ? $0.origin : nil }) { return known }
        let origin = "http://\(host)"
        lastOrigin.withLock { $0 = (host, origin) }
        return origin
    }

    // MARK: Rate limit

    /// A 429 when `path` is over its budget in the current window; otherwise the request is counted.
    private func rateLimited(_ path: Substring, request: HTTPRequest, at time: Duration) -> HTTPResponse? {
        guard let limit = options.rateLimit else { return nil }
        let path = String(path)
        guard limit.paths.isEmpty || limit.paths.contains(path) else { return nil }
        let windowSeconds = max(1, limit.window.components.seconds)
        let window = time.components.seconds / windowSeconds
        let over = state.withLock { state -> Bool in
            // Paths nobody configured (anything under /idp/idx/) must not grow the table: past a few dozen, new ones go uncounted.
            guard state.windows[path] != nil || state.windows.count < Self.rateLimitedPathCapacity else { return false }
            var entry = state.windows[path] ?? (window, 0)
            if entry.window != window { entry = (window, 0) }
            entry.count += 1
            state.windows[path] = entry
            return entry.count > limit.limit
        }
        guard over else { return nil }
        var response: HTTPResponse
        let handle = IDXRequestBody(request.body).stateHandle ?? ""
        if path == IDXPaths.answer, let transaction = state.withLock({ $0.transactions.value(handle, now: time) }) {
            // On /challenge/answer a 429 carries the state in ION (docs/protocols.md, Okta IDX).
            response = ion(transaction, handle: handle, origin: origin(of: request), status: 429, topError: Self.rateLimitMessage)
        } else {
            response = .json(
                status: 429,
                [
                    "errorCode": "E0000047", "errorSummary": .string(Self.rateLimitMessage.text), "errorLink": "E0000047",
                    "errorId": .string(random.withLock { "oae" + $0.hex(20) }), "errorCauses": []
                ])
        }
        response.headers.add("X-Rate-Limit-Limit", "\(limit.limit)")
        response.headers.add("X-Rate-Limit-Remaining", "0")
        response.headers.add("X-Rate-Limit-Reset", "\((window + 1) * windowSeconds)")
        return response
    }
}
