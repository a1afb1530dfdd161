import AuthloadCore
import AuthloadWire

/// Okta Identity Engine embedded login with an email or SMS code (docs/protocols.md, Okta IDX, the Interaction Code flow).
///
/// One iteration: `POST {issuer}/v1/interact` with a PKCE S256 challenge → `POST /idp/idx/introspect` →
/// then whatever the server's remediations ask for — `identify` (with the password in the same form under a
/// single-form policy), `challenge-authenticator` for the password (identifier-first), `select-authenticator-
/// authenticate` picking the profile's factor, `challenge-authenticator` for the code, `skip` for optional
/// enrollment — until `successWithInteractionCode`, whose form is posted to the token endpoint with the
/// code verifier. Each form goes to the remediation's href with its method and content type, its fields
/// filled per docs/protocols.md, Okta IDX, so a policy shape the profile did not foresee still works, or ends with
/// "cannot proceed at remediation X".
///
/// Statuses follow okta-idx-swift (§B.5): 200–499 from IDX calls are read as ION; an ERROR message is an
/// auth failure (`api.authn.error.PASSCODE_INVALID`, a wrong password) or a protocol error, named by its
/// i18n key; 5xx is an HTTP error. A 429 is waited out until `X-Rate-Limit-Reset` — worked out against the
/// server's `Date`, so clock skew does not matter — and sent again, counted on the `retry` event step, except
/// on `/challenge/answer`, whose 429 carries ION. `idx.session.expired` starts over from interact when
/// `restartOnExpiry` allows (counted on the `restart` event step).
public struct OktaIDXFlow: Flow {
    public enum Factor: String, Sendable, CaseIterable {
        case email, sms
    }

    public struct Options: Sendable, Equatable {
        public var paths = IDXPaths()
        public var clientID = "authload"
        public var redirectURI = "com.example.authload:/callback"
        public var scope = "openid profile offline_access"
        public var factor = Factor.email
        /// [M] The code the staging service sends by email or SMS: a test-only convention, since a load
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

    public init(options: Options, basePath: String = "") {
        self.options = options
        self.basePath = basePath
    }

    enum Step: String, CaseIterable {
        case interact, introspect, identify, password
        case select = "select-authenticator"
        case answer, skip, token, retry, restart
    }

    public var stepNames: [String] { Step.allCases.map(\.rawValue) }

    /// Retries and restarts are the flow's reactions to an answer, not requests of their own.
    public var eventSteps: Set<String> { [Step.retry.rawValue, Step.restart.rawValue] }

    static func index(_ step: Step) -> Int { Step.allCases.firstIndex(of: step)! }

    /// Remediations taken at most per attempt, so a server that answers in circles cannot hold a user forever.
    static let maxRemediations = 12

    public func run<C: Clock>(_ context: FlowContext<C>, user: isolated VirtualUser) async -> Outcome where C.Duration == Duration {
        var iteration = OktaIDXIteration(flow: self, context: context, username: user.identity.username, password: user.identity.password)
        return await iteration.run()
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
    static func classifyOAuth(_ response: HTTPResponse, requiring member: String) -> Outcome {
        let json = try? JSONValue.parse(response.body)
        if response.status == 200 {
            return json?[member]?.stringValue?.isEmpty == false ? .ok : Outcome(.protocolError, "no \(member)")
        }
        if (400..<500).contains(response.status), let error = json?["error"]?.stringValue, !error.isEmpty {
            return Outcome(.protocolError, error)
        }
        return Outcome(.httpError, "\(response.status)")
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
