import AuthloadCore
import AuthloadWire

/// Decides each step of an IDX login from the server's last answer alone, in the order of the Okta SDK's login
/// sample (docs/protocols.md, Okta IDX, "Walking the remediations"): the walk is the org's policy, never a
/// script of the flow's.
///
/// A value with no I/O and no clock: ``OktaIDXIteration`` sends what ``next(after:)`` returns and feeds the
/// answer back, so every policy shape can be tested on fixtures without a socket.
///
/// ```swift
/// var walker = IDXWalker(factors: [.sms, .email], answers: answers)
/// switch walker.next(after: introspected) {
/// case .submit(let remediation, let step, let body): …   // send body to remediation.targetPath
/// case .poll(let remediation, let wait, let body): …     // wait, then send
/// case .exchange(let success): …                          // the token request
/// case .fail(let outcome): …
/// }
/// ```
struct IDXWalker: Sendable {
    typealias Step = OktaIDXFlow.Step

    /// What the user can answer with; nil where the user data has no such field.
    struct Answers: Sendable {
        var username: String
        var password: String
        /// The code "sent" by email or SMS, or shown by an authenticator app.
        var passcode: String
        var securityAnswer: String?
        var phoneNumber: String?
    }

    enum Decision: Sendable, Equatable {
        /// The login is done: post the `successWithInteractionCode` form to the token endpoint.
        case exchange(IDXRemediation)
        /// Send `body` (the filled form, serialized) to the remediation's href, measured as `step`; the walker also
        /// keeps it, to tell a repeated answer.
        case submit(IDXRemediation, step: Step, body: [UInt8])
        /// Wait `after` (the server's `refresh`), then send `body`: the user has not approved the push yet.
        case poll(IDXRemediation, after: Duration, body: [UInt8])
        case fail(Outcome)
    }

    /// The methods the user would pick, most wanted first.
    let factors: [OktaIDXFlow.Factor]
    let answers: Answers

    /// Answering one remediation with the same body this many times is a loop, not progress.
    static let maxRepeats = 2
    /// How long to wait between polls when the server does not say.
    static let defaultRefresh = Duration.seconds(4)

    private var passwordAnswered = false
    /// The method chosen last (at a select or verification-data form), which names the challenge that follows.
    private var chosenMethod: String?
    /// Each answer sent so far, by remediation and serialized body, and how often: a login sends a handful, so a list
    /// scanned in turn beats hashing each body.
    private var answered: [(remediation: String, body: [UInt8], count: Int)] = []

    init(factors: [OktaIDXFlow.Factor], answers: Answers) {
        self.factors = factors
        self.answers = answers
    }

    // The rules in the SDK's order; the first that applies decides.
    mutating func next(after response: IDXResponse) -> Decision {
        if let success = response.success { return .exchange(success) }
        if let error = response.messages.first(where: \.isError) { return .fail(OktaIDXFlow.outcome(for: error)) }
        // One or two names compared in turn: a set literal built and hashed at every rule cost more than the comparisons.
        // An index, the remediation then read in place: `first(where:)` returned a copy of it, every string and list in
        // it retained and released.
        let remediations = response.remediations
        func offered(_ name: String, or other: String? = nil) -> Int? {
            remediations.firstIndex { $0.name == name || $0.name == other }
        }

        if let identify = offered("identify", or: "identify-recovery") { return self.identify(remediations[identify]) }
        if let challenge = offered("challenge-authenticator") { return answer(remediations[challenge], in: response) }
        if let poll = offered("challenge-poll") { return self.poll(remediations[poll]) }
        if let select = offered("select-authenticator-authenticate") { return self.select(remediations[select], in: response) }
        // Optional enrollment comes with `skip`: a load test logs in, it does not enroll.
        if let skip = offered("skip") { return submit(remediations[skip], step: .skip) { _ in nil } }
        if let enroll = offered("enroll-authenticator") { return answer(remediations[enroll], in: response) }
        if let select = offered("select-authenticator-enroll") { return self.select(remediations[select], in: response) }
        if let data = offered("authenticator-verification-data", or: "authenticator-enrollment-data") {
            return verificationData(remediations[data])
        }
        if offered("select-enroll-profile", or: "enroll-profile") != nil { return .fail(Outcome(.protocolError, "user not enrolled")) }
        let name = remediations.first { $0.name != "cancel" }?.name
        return .fail(cannotProceed(at: name ?? "(none)", offered: response.remediations.map(\.name)))
    }

    // MARK: Rules

    private mutating func identify(_ remediation: IDXRemediation) -> Decision {
        let asksPassword = remediation.fields.contains { $0.name == "credentials" }
        let answers = self.answers
        let decision = submit(remediation, step: .identify) { path in
            if path == FieldPath.identifier { return .string(answers.username) }
            return path == FieldPath.passcode ? .string(answers.password) : nil
        }
        if asksPassword, case .submit = decision { passwordAnswered = true }
        return decision
    }

    /// `challenge-authenticator` or `enroll-authenticator`: answered by the type of the authenticator it is about.
    private mutating func answer(_ remediation: IDXRemediation, in response: IDXResponse) -> Decision {
        let authenticator = response.currentAuthenticator ?? remediation.relatesTo.lazy.compactMap(response.authenticator(relatedTo:)).first
        let type = authenticator?.type ?? ""
        let step: Step
        var secret = answers.passcode
        switch type {
        case "password":
            step = .challengePassword
            secret = answers.password
        case "security_question":
            guard let answer = answers.securityAnswer else {
                return .fail(Outcome(.protocolError, "security question asked: the user data has no securityAnswer"))
            }
            step = .challengeQuestion
            secret = answer
        case "email":
            step = .challengeEmail
        case "phone":
            let method = chosenMethod.flatMap { authenticator?.offers(method: $0) == true ? $0 : nil } ?? authenticator?.methods.first
            step = method == "voice" ? .challengeVoice : .challengeSMS
        case "app":
            step = .challengeTOTP
        default:
            step = .challengeCode
        }
        let decision = submit(remediation, step: step) { path in
            path == FieldPath.passcode || path == FieldPath.totp || path == FieldPath.answer ? .string(secret) : nil
        }
        if type == "password", case .submit = decision { passwordAnswered = true }
        return decision
    }

    /// `challenge-poll`: the server waits for the user (an Okta Verify push); ask again after its `refresh`.
    private func poll(_ remediation: IDXRemediation) -> Decision {
        do {
            let body = try remediation.fields.serializedAnswer(value: { _ in nil }, choose: { $0.options.first })
            return .poll(remediation, after: remediation.refresh ?? Self.defaultRefresh, body: body)
        } catch {
            return .fail(Outcome(.protocolError, "cannot answer remediation \(remediation.name): \(error.description)"))
        }
    }

    /// `select-authenticator-*`: the password first when it is offered and not yet given (the SDK's rule), else the
    /// first of the profile's factors an option offers.
    private mutating func select(_ remediation: IDXRemediation, in response: IDXResponse) -> Decision {
        guard let field = remediation.fields.first(where: { !$0.options.isEmpty }) else {
            return .fail(cannotProceed(at: remediation.name, offered: []))
        }
        var wanted = factors.map(\.rawValue)
        if !passwordAnswered && !answers.password.isEmpty { wanted.insert("password", at: 0) }
        for method in wanted {
            guard let option = field.options.first(where: { Self.option($0, offers: method, in: response) }) else { continue }
            chosenMethod = method
            return submit(remediation, step: .select) { _ in
                nil
            } choose: { candidate in
                if candidate.name == field.name { return option }
                return candidate.name == "methodType" ? candidate.options.first { $0.value?.stringValue == method } : nil
            }
        }
        let offered = field.options.map { option in
            option.methodTypes.first ?? option.relatesTo.flatMap(response.authenticator(relatedTo:))?.type ?? option.label
        }
        return .fail(cannotProceed(at: remediation.name, offered: offered))
    }

    /// `authenticator-verification-data` / `-enrollment-data`: the method (SMS or voice) from the profile's factors.
    private mutating func verificationData(_ remediation: IDXRemediation) -> Decision {
        var chosen: String?
        let (answers, factors) = (self.answers, self.factors)
        let decision = submit(remediation, step: .verificationData) { path in
            path.last == "phoneNumber" ? answers.phoneNumber.map(JSONValue.string) : nil
        } choose: { field in
            let offered = field.options.compactMap { $0.value?.stringValue }
            guard let method = factors.map(\.rawValue).first(where: offered.contains) else { return nil }
            chosen = method
            return field.options.first { $0.value?.stringValue == method }
        }
        if let chosen { chosenMethod = chosen }
        return decision
    }

    // MARK: Helpers

    /// The paths the walker fills in, made once: a literal compared with a path is an array built at every field.
    enum FieldPath {
        static let identifier = ["identifier"]
        static let passcode = ["credentials", "passcode"]
        static let totp = ["credentials", "totp"]
        static let answer = ["credentials", "answer"]
        static let codeVerifier = ["code_verifier"]
    }

    /// True when taking `option` can mean `method`: the option says so itself, or, when it names no method, the
    /// authenticator its `relatesTo` points at offers it.
    static func option(_ option: IDXOption, offers method: String, in response: IDXResponse) -> Bool {
        if option.offers(method: method) { return true }
        guard !option.offersMethodType(), let path = option.relatesTo else { return false }
        return response.authenticator(relatedTo: path)?.offers(method: method) == true
    }

    /// Fills the form and counts the answer, so the same answer to the same remediation cannot go round forever.
    private mutating func submit(
        _ remediation: IDXRemediation, step: Step, value: ([String]) -> JSONValue?,
        choose: (IDXField) -> IDXOption? = { _ in nil }
    ) -> Decision {
        let bytes: [UInt8]
        do {
            bytes = try remediation.fields.serializedAnswer(value: value, choose: choose)
        } catch {
            return .fail(Outcome(.protocolError, "cannot answer remediation \(remediation.name): \(error.description)"))
        }
        let count: Int
        if let index = answered.firstIndex(where: { $0.remediation == remediation.name && $0.body == bytes }) {
            answered[index].count += 1
            count = answered[index].count
        } else {
            answered.append((remediation.name, bytes, 1))
            count = 1
        }
        guard count <= Self.maxRepeats else { return .fail(Outcome(.protocolError, "loop at \(remediation.name)")) }
        return .submit(remediation, step: step, body: bytes)
    }

    private func cannotProceed(at name: String, offered: [String]) -> Outcome {
        let list = offered.isEmpty ? "" : "; offered: " + offered.joined(separator: ", ")
        return Outcome(.protocolError, "cannot proceed at remediation \(name)\(list)")
    }
}

extension IDXWalker.Decision {
    /// The outcome of a decision that ends the login, nil for one that goes on.
    var failure: Outcome? {
        if case .fail(let outcome) = self { outcome } else { nil }
    }
}
