import AuthloadCore
import AuthloadWire

/// Okta Identity Engine embedded login with MFA (docs/protocols.md, Okta IDX, the Interaction Code flow).
///
/// One iteration: `POST {issuer}/v1/interact` with a PKCE S256 challenge → `POST /idp/idx/introspect` →
/// then whatever the server's remediations ask for, each decided from the answer alone by ``IDXWalker`` as the
/// SDK's login sample decides it: the identifier (and the password when the form asks), the password first
/// when an org offers it among the authenticators, the profile's preferred factor, SMS or voice when the
/// phone asks, each challenge answered by its authenticator's type, an Okta Verify push polled at the
/// server's `refresh`, `skip` for optional enrollment — until `successWithInteractionCode`, whose form is
/// posted to the token endpoint with the code verifier. An answer the walker cannot use ends the flow with
/// "cannot proceed at remediation X; offered: …".
///
/// Statuses follow okta-idx-swift (§B.5): 200–499 from IDX calls are read as ION; an ERROR message is an
/// auth failure (`api.authn.error.PASSCODE_INVALID`, a wrong password) or a protocol error, named by its
/// i18n key; 5xx is an HTTP error. A 429 is waited out until `X-Rate-Limit-Reset` — worked out against the
/// server's `Date`, so clock skew does not matter — and sent again, counted on the `retry` event step, except
/// on `/challenge/answer`, whose 429 carries ION. `idx.session.expired` starts over from interact when
/// `restartOnExpiry` allows (counted on the `restart` event step).
public struct OktaIDXFlow: Flow {
    /// A method the user can be challenged with, named as IDX names it (`methodType`).
    public enum Factor: String, Sendable, CaseIterable {
        case email, sms, voice
        /// Okta Verify's (or another authenticator app's) code.
        case totp
        /// Okta Verify's push, approved on the device while the flow polls.
        case push
        case securityQuestion = "security_question"
    }

    public struct Options: Sendable, Equatable {
        public var paths = IDXPaths()
        public var clientID = "authload"
        public var redirectURI = "com.example.authload:/callback"
        public var scope = "openid profile offline_access"
        /// The methods the user picks from, most wanted first (`factor` in a profile is the one-item form).
        public var factors: [Factor] = [.email, .sms, .voice, .totp]
        /// Ours: the code the staging service sends by email or SMS: a test-only convention, since a load
        /// tool cannot read real mailboxes.
        public var passcode = "123456"
        /// Start again from interact when the server says the state handle expired.
        public var restartOnExpiry = false
        /// How many times one iteration may start again.
        public var maxRestarts = 1
        /// How many times one request is sent again after a 429.
        public var maxRetries = 3

        public init() {}
    }

    public let options: Options
    let basePath: String
    /// Where interact is, and its form's pairs that the options fix (client, scope, redirect URI) encoded, made once:
    /// every attempt built the path and percent-encoded them again.
    let interactTarget: String
    let interactFormStart: [UInt8]

    public init(options: Options, basePath: String = "") {
        self.options = options
        self.basePath = basePath
        interactTarget = basePath + options.paths.interact
        interactFormStart = FormURLEncoding.encode([
            ("client_id", options.clientID), ("scope", options.scope), ("redirect_uri", options.redirectURI)
        ])
    }

    /// Steps are named after what was answered, so the report shows every round trip of the org's policy.
    enum Step: String, CaseIterable, Sendable {
        case interact, introspect, identify
        case select = "select-authenticator"
        case verificationData = "verification-data"
        case challengePassword = "challenge-password"
        case challengeEmail = "challenge-email"
        case challengeSMS = "challenge-sms"
        case challengeVoice = "challenge-voice"
        case challengeTOTP = "challenge-totp"
        case challengeQuestion = "challenge-question"
        /// A challenge of an authenticator type the flow does not name, answered with the passcode.
        case challengeCode = "challenge-code"
        case poll, skip, token, retry, restart
    }

    public var stepNames: [String] { Step.allCases.map(\.rawValue) }

    /// Retries and restarts are the flow's reactions to an answer, not requests of their own.
    public var eventSteps: Set<String> { [Step.retry.rawValue, Step.restart.rawValue] }

    static func index(_ step: Step) -> Int { Step.allCases.firstIndex(of: step)! }

    /// Remediations taken at most per attempt, so a server that answers in circles cannot hold a user forever.
    static let maxRemediations = 12

    // Specialized for a simulation's clock only: there a flow's turns cost CPU and nothing else, while a real run's
    // flows stay generic for the memory of users waiting in them (Runner.run(), docs/development.md).
    @_specialize(where C == SimulationClock)
    public func run<C: Clock>(_ context: FlowContext<C>, user: isolated VirtualUser) async -> Outcome where C.Duration == Duration {
        let identity = user.identity
        let answers = IDXWalker.Answers(
            username: identity.username, password: identity.password, passcode: identity["passcode"] ?? options.passcode,
            securityAnswer: identity["securityAnswer"], phoneNumber: identity["phone"])
        return await OktaIDXIteration(flow: self, context: context, answers: answers).run()
    }

    // MARK: Classification

    /// ERROR keys that mean the user's credentials were refused, rather than the protocol going wrong.
    static let authFailureKeys: Set<String> = [
        IDXMessageKey.passcodeInvalid, IDXMessageKey.incorrectPassword, IDXMessageKey.unknownUser, IDXMessageKey.answerInvalid,
        "errors.E0000004"
    ]

    /// How an IDX ERROR message counts: an auth failure or a protocol error, named by its i18n key (never its text).
    static func outcome(for message: IDXMessage) -> Outcome {
        Outcome(authFailureKeys.contains(message.key) ? .authFailure : .protocolError, message.key)
    }

    /// How an answer from the OAuth side (interact, token) counts: its `error` code on a 4xx, the status otherwise.
    static func classifyOAuth(_ response: HTTPResponse, requiring member: StaticString) -> Outcome {
        classifyOAuth(response, body: OAuthBody(response.body, requiring: member), requiring: member)
    }

    /// ``classifyOAuth(_:requiring:)`` of a response whose body the caller has read.
    static func classifyOAuth(_ response: HTTPResponse, body: OAuthBody, requiring member: StaticString) -> Outcome {
        if response.status == 200 {
            return body.required?.isEmpty == false ? .ok : Outcome(.protocolError, "no \(member)")
        }
        if (400..<500).contains(response.status), let error = body.error, !error.isEmpty {
            return Outcome(.protocolError, error)
        }
        return Outcome(.httpError, "\(response.status)")
    }

    /// What an OAuth answer (interact, token) is classified by, read straight from its body's bytes: the string member
    /// the step requires, and `error`.
    ///
    /// Read as from a tree: a member that is not a string counts as absent, and a body that is not valid JSON, or not
    /// an object, has neither; only the two strings are made, where a tree of the whole body was built to find them.
    struct OAuthBody: Equatable {
        var required: String?
        var error: String?

        init(required: String? = nil, error: String? = nil) {
            self.required = required
            self.error = error
        }

        init(_ bytes: [UInt8], requiring member: StaticString) {
            var body = OAuthBody()
            do {
                try JSONReader.read(bytes) { reader throws(JSONParseError) in
                    try reader.readMembers(into: &body) { reader, key, body throws(JSONParseError) in
                        if key == member {
                            body.required = try reader.string()
                        } else if key == "error" {
                            body.error = try reader.string()
                        }
                    }
                }
            } catch {
                return
            }
            self = body
        }
    }

    /// How long a 429 asks the client to wait: until `X-Rate-Limit-Reset` (UTC epoch seconds) by the server's
    /// own `Date`, so the two clocks never meet; `Retry-After`, or a second, when those headers are missing.
    static func rateLimitWait(_ response: HTTPResponse) -> Duration? {
        guard response.status == 429 else { return nil }
        if let reset = response.headers["X-Rate-Limit-Reset"].flatMap({ Int64($0) }),
            let date = response.headers["Date"].flatMap({ HTTPDate.parse($0) })
        {
            return .seconds(max(0, reset - date))
        }
        if let after = response.headers["Retry-After"].flatMap({ Int64($0) }) { return .seconds(max(0, after)) }
        return .seconds(1)
    }
}
