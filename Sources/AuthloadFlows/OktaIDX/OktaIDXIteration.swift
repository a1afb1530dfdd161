import AuthloadCore
import AuthloadWire

/// One IDX login of one user: the remediation loop, and the PKCE pair and handles each attempt holds between steps.
///
/// A class, and nothing in it changes once made: as a value, its async steps copied the whole of it (the flow's
/// options, the context, the answers) at every call and destroyed the copy after, two percent of a simulated login.
final class OktaIDXIteration<C: Clock>: Sendable where C.Duration == Duration {
    typealias Step = OktaIDXFlow.Step

    let flow: OktaIDXFlow
    let context: FlowContext<C>
    let answers: IDXWalker.Answers

    init(flow: OktaIDXFlow, context: FlowContext<C>, answers: IDXWalker.Answers) {
        self.flow = flow
        self.context = context
        self.answers = answers
    }

    private var options: OktaIDXFlow.Options { flow.options }

    /// How one attempt (interact → token) ended: an outcome, or an expired state handle not yet recorded.
    private enum AttemptEnd {
        case done(Outcome)
        case expired(step: Step, start: C.Instant, latency: Duration)
    }

    /// An IDX call's answer: failed (already recorded), expired (not recorded: a restart may absorb it),
    /// or an ION state to act on (recorded once the flow knows whether it can proceed).
    private enum IDXAnswer {
        case failed(Outcome)
        case expired(step: Step, start: C.Instant, latency: Duration)
        case state(IDXResponse, step: Step, start: C.Instant, latency: Duration)
    }

    /// An interact or token answer: the member it requires when it succeeded, or how it failed (recorded).
    private enum OAuthAnswer {
        case member(String)
        case failed(Outcome)
    }

    func run() async -> Outcome {
        let context = self.context
        var restarts = 0
        while true {
            let attemptStart = context.clock.now
            switch await attempt(context) {
            case .done(let outcome):
                return outcome
            case .expired(let step, let start, let latency):
                if options.restartOnExpiry && restarts < options.maxRestarts {
                    restarts += 1
                    // Timed by what the expired attempt cost.
                    context.record(step: OktaIDXFlow.index(.restart), start: attemptStart, outcome: .ok)
                    continue
                }
                let outcome = Outcome(.protocolError, IDXMessageKey.sessionExpired)
                context.record(step: OktaIDXFlow.index(step), start: start, outcome: outcome, latency: latency)
                return outcome
            }
        }
    }

    // MARK: Steps

    /// One attempt, on `context`: the steps take the context as an argument, read once per login. Each use of the
    /// stored property in an async function copied the whole value (its clock, client and recorder retained) and
    /// destroyed the copy after, 2 % of a simulated login.
    private func attempt(_ context: FlowContext<C>) async -> AttemptEnd {
        // PKCE (RFC 7636): 64 random bytes give an 86-character verifier, within the 43–128 allowed.
        let verifier = Base64.urlEncoded(Digest.secureRandomBytes(count: 64))
        let challenge = Base64.urlEncoded(Digest.sha256(Array(verifier.utf8)))
        let state = Base64.urlEncoded(Digest.secureRandomBytes(count: 16))

        // B1: interact.
        var form = flow.interactFormStart
        form.reserveCapacity(form.count + 64 + challenge.utf8.count + state.utf8.count)
        // Appended as they are: the names are plain, and base64url's alphabet (letters, digits, `-`, `_`) is all
        // unreserved, so percent-encoding, which checked every byte of them, changes nothing.
        form.append(contentsOf: "&code_challenge=".utf8)
        form.append(contentsOf: challenge.utf8)
        form.append(contentsOf: "&code_challenge_method=S256&state=".utf8)
        form.append(contentsOf: state.utf8)
        var interact = HTTPRequest(method: "POST", target: flow.interactTarget, body: form)
        interact.headers.add("Content-Type", IDXMediaType.form)
        interact.headers.add("Accept", "application/json")
        let handle: String
        switch await oauth(interact, step: .interact, requiring: "interaction_handle", in: context) {
        case .member(let member): handle = member
        case .failed(let outcome): return .done(outcome)
        }

        // B2: introspect, then the remediations the server asks for.
        var handleBody = JSONObjectWriter(reservingCapacity: 32 + handle.utf8.count)
        handleBody.add("interactionHandle", handle)
        var introspect = HTTPRequest(method: "POST", target: IDXPaths.introspect, body: handleBody.finish())
        introspect.headers.add("Content-Type", IDXMediaType.ion)
        introspect.headers.add("Accept", IDXMediaType.ion)
        var answer = await idx(introspect, step: .introspect, in: context)
        var walker = IDXWalker(factors: options.factors, answers: answers)
        var taken = 0
        /// When the current run of polls began: polling for one push may last a step timeout, no longer.
        var pollingSince: C.Instant?
        while true {
            // Consumed, the state and the decision moved out rather than copied: each is reassigned before the loop
            // goes round.
            switch consume answer {
            case .failed(let outcome):
                return .done(outcome)
            case .expired(let step, let start, let latency):
                return .expired(step: step, start: start, latency: latency)
            case .state(let response, let step, let start, let latency):
                var decision = walker.next(after: response)
                switch decision {
                case .submit(let remediation, _, _) where taken >= OktaIDXFlow.maxRemediations:
                    decision = .fail(Outcome(.protocolError, "loop at \(remediation.name)"))
                case .poll(_, let wait, _):
                    let since = pollingSince ?? start
                    pollingSince = since
                    if since.duration(to: context.clock.now) + wait > context.stepTimeout {
                        decision = .fail(Outcome(.timeout, "not approved within the step timeout"))
                    }
                default:
                    break
                }
                context.record(step: OktaIDXFlow.index(step), start: start, outcome: decision.failure ?? .ok, latency: latency)
                switch consume decision {
                case .fail(let outcome):
                    return .done(outcome)
                case .exchange(let success):
                    return .done(await token(success, verifier: verifier, in: context))
                case .submit(let remediation, let nextStep, let body):
                    taken += 1
                    pollingSince = nil
                    answer = await idx(send(remediation, body), step: nextStep, in: context)
                case .poll(let remediation, let wait, let body):
                    let paused = await context.pause(for: wait)
                    guard paused.isOK else { return .done(paused) }
                    answer = await idx(send(remediation, body), step: .poll, in: context)
                }
            }
        }
    }

    /// A remediation's form, serialized, as a request to its href, with its method and content type.
    private func send(_ remediation: IDXRemediation, _ body: [UInt8]) -> HTTPRequest {
        var request = HTTPRequest(method: remediation.method, target: remediation.targetPath, body: body)
        request.headers.add("Content-Type", remediation.accepts ?? IDXMediaType.json)
        request.headers.add("Accept", IDXMediaType.ion)
        return request
    }

    /// B6: the `successWithInteractionCode` form, posted as a form with the code verifier added.
    private func token(_ success: IDXRemediation, verifier: String, in context: FlowContext<C>) async -> Outcome {
        // Like the SDK, fields with no value (client_secret for a public client) are left out.
        let fields = try? success.fields.filled(
            value: { $0 == IDXWalker.FieldPath.codeVerifier ? .string(verifier) : nil }, choose: { _ in nil }, omitMissing: true)
        let pairs = (fields ?? JSONObject()).compactMap { member -> (String, String)? in
            switch member.value {
            case .string(let text): (member.key, text)
            case .number, .bool: (member.key, member.value.serializedString)
            default: nil
            }
        }
        var request = HTTPRequest(method: success.method, target: success.targetPath, body: FormURLEncoding.encode(pairs))
        request.headers.add("Content-Type", IDXMediaType.form)
        request.headers.add("Accept", "application/json")
        switch await oauth(request, step: .token, requiring: "access_token", in: context) {
        case .member: return .ok
        case .failed(let outcome): return outcome
        }
    }

    // MARK: Exchanges

    /// An interact or token call: retried on 429, recorded, and the member it requires returned when it succeeded.
    private func oauth(
        _ request: HTTPRequest, step: Step, requiring member: StaticString, in context: FlowContext<C>
    ) async -> OAuthAnswer {
        let attempt = await context.sendWithBackoff(
            request, retryStep: OktaIDXFlow.index(.retry), maxRetries: options.maxRetries,
            backoff: OktaIDXFlow.rateLimitWait)
        // Read once, for the outcome and for the caller.
        let body = attempt.response.map { OktaIDXFlow.OAuthBody($0.body, requiring: member) }
        let outcome =
            attempt.failure ?? attempt.response.map { OktaIDXFlow.classifyOAuth($0, body: body ?? .init(), requiring: member) }
            ?? .cancelled
        context.record(
            step: OktaIDXFlow.index(step), start: attempt.start, outcome: outcome, latency: attempt.latency(now: context.clock.now))
        guard outcome.isOK, let required = body?.required else { return .failed(outcome) }
        return .member(required)
    }

    /// An IDX call per docs/protocols.md, Okta IDX: 429 waited out and sent again (except on `/challenge/answer`, whose
    /// 429 is ION), 200–499 read as ION, ERROR messages named by key, 5xx an HTTP error.
    private func idx(_ request: HTTPRequest, step: Step, in context: FlowContext<C>) async -> IDXAnswer {
        // Compared as bytes: `hasSuffix` on a substring compares characters, a percent of a simulated login's CPU.
        let retriable = !OktaIDXFlow.isAnswer(request.target)
        let attempt = await context.sendWithBackoff(request, retryStep: OktaIDXFlow.index(.retry), maxRetries: options.maxRetries) {
            response in
            retriable ? OktaIDXFlow.rateLimitWait(response) : nil
        }
        let latency = attempt.latency(now: context.clock.now)
        func failed(_ outcome: Outcome) -> IDXAnswer {
            context.record(step: OktaIDXFlow.index(step), start: attempt.start, outcome: outcome, latency: latency)
            return .failed(outcome)
        }
        guard let response = attempt.response else { return failed(attempt.failure ?? .cancelled) }
        guard response.status < 500 else { return failed(Outcome(.httpError, "\(response.status)")) }
        guard let ion = IDXResponse(body: response.body) else {
            return failed(
                response.status == 200 ? Outcome(.protocolError, "not an ION response") : Outcome(.httpError, "\(response.status)"))
        }
        if ion.messages.contains(where: { $0.isError && $0.key == IDXMessageKey.sessionExpired }) {
            return .expired(step: step, start: attempt.start, latency: latency)
        }
        if let error = ion.firstError { return failed(OktaIDXFlow.outcome(for: error)) }
        return .state(ion, step: step, start: attempt.start, latency: latency)
    }
}

extension OktaIDXFlow {
    /// Whether a request target's path (the part before any query) ends in `/challenge/answer`.
    ///
    /// Compared in the target's bytes: the path as a substring and a reversed comparison were half a percent of a
    /// simulated login's CPU.
    static func isAnswer(_ target: String) -> Bool {
        var target = target
        return target.withUTF8 { bytes in
            let suffix: StaticString = "/challenge/answer"
            let end = bytes.firstIndex(of: UInt8(ascii: "?")) ?? bytes.count
            guard end >= suffix.utf8CodeUnitCount else { return false }
            return suffix.withUTF8Buffer { suffix in
                bytes[(end - suffix.count)..<end].elementsEqual(suffix)
            }
        }
    }
}
