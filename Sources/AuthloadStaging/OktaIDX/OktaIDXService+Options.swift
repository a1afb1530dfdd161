import AuthloadCore
import AuthloadWire

extension OktaIDXService {
    /// How the sign-on policy asks for the password.
    /// Each shape is one a real org's sign-on policy produces; together they cover every rule of the client's walker.
    public enum Policy: String, Sendable, CaseIterable {
        /// `identify` asks for the username only; the password is challenged next, then a factor is picked.
        case identifierFirst = "identifier-first"
        /// `identify` asks for username and password in one form, then a factor is picked.
        case singleForm = "single-form"
        /// After `identify`, one `select-authenticator-authenticate` offers the password among the factors (Email,
        /// Password, Phone); whatever is picked first, the other is asked for next. The phone is offered without a
        /// method, which `authenticator-verification-data` asks for.
        case selectFirst = "select-first"
        /// The factor is picked and answered first; the password is challenged after the code.
        case factorFirst = "factor-first"
        /// Identifier-first, then the security question instead of a code.
        case securityQuestion = "security-question"
    }

    /// The methods a staging org can send a code by.
    public static let factorNames = ["email", "sms", "voice"]

    /// A request budget per endpoint and window, as Okta's org rate limits work: over it, 429 until the window ends.
    public struct RateLimit: Sendable, Equatable {
        /// Requests per window per path, across all users.
        public var limit: Int
        /// Windows are aligned to multiples of this length since the Unix epoch; whole seconds.
        public var window: Duration
        /// The paths limited; empty limits every path of the service.
        public var paths: [String]

        public init(limit: Int, window: Duration = .seconds(60), paths: [String] = []) {
            self.limit = limit
            self.window = window
            self.paths = paths
        }
    }

    public struct Options: Sendable, Equatable {
        public var paths = IDXPaths()
        /// How long each call takes.
        public var latency = LatencyModel.none
        /// Extra time `/challenge` (and resend) takes to send the email or SMS.
        public var dispatchLatency = LatencyModel.none
        public var policy = Policy.identifierFirst
        /// The methods offered at `select-authenticator-authenticate`, in order: `email`, `sms`, `voice` (SMS and
        /// voice are two methods of one phone authenticator).
        public var factors = ["email", "sms"]
        /// Offer `select-authenticator-enroll` instead: a policy the load tool cannot complete.
        public var requireEnrollment = false
        /// When set, other client ids are refused with `invalid_client`.
        public var clientID: String?
        /// When set, the password every user must give; otherwise any non-empty one passes.
        public var password: String?
        /// Ours: the code "sent" by email or SMS; the flow's `passcode` must match.
        public var passcode = "123456"
        /// When set, the answer every user must give to the security question; otherwise any non-empty one passes.
        public var securityAnswer: String?
        /// Share of code answers rejected with `api.authn.error.PASSCODE_INVALID` even when right.
        public var wrongPasscodeRate = 0.0
        /// How long a state handle (and an interaction handle) lives after it is issued.
        public var stateHandleLifetime: Duration = .seconds(600)
        /// How long an interaction code may wait for the token request.
        public var interactionCodeLifetime: Duration = .seconds(60)
        public var tokenLifetime: Duration = .seconds(3600)
        public var rateLimit: RateLimit?
        /// The origin hrefs start with (e.g. `https://example.okta.com`); by default the request's `Host`.
        public var origin: String?

        public init() {}
    }
}

extension OktaIDXService.Options {
    /// Reads `target.embedded.okta`:
    ///
    /// ```json
    /// {"policy": "identifier-first", "factors": ["email", "sms"], "passcode": "123456", "wrongPasscodeRate": 0.01,
    ///  "latency": {"fixed": "5ms"}, "dispatchLatency": {"lognormal": {"median": "200ms", "p99": "2s"}},
    ///  "stateHandleLifetime": "10m", "rateLimit": {"limit": 600, "window": "60s", "paths": ["/idp/idx/introspect"]}}
    /// ```
    public static func read(_ reader: ProfileReader) throws(ProfileError) -> Self {
        try reader.rejectUnknownKeys(allowed: [
            "issuerPath", "latency", "dispatchLatency", "policy", "factors", "requireEnrollment", "clientId", "password", "passcode",
            "securityAnswer", "wrongPasscodeRate", "stateHandleLifetime", "interactionCodeLifetime", "tokenLifetime", "rateLimit", "origin"
        ])
        var options = Self()
        options.paths = try IDXPaths.read(reader)
        if let r = try reader.optional("latency") { options.latency = try LatencyModel.read(r) }
        if let r = try reader.optional("dispatchLatency") { options.dispatchLatency = try LatencyModel.read(r) }
        if let r = try reader.optional("policy") {
            options.policy = OktaIDXService.Policy(rawValue: try r.oneOf(OktaIDXService.Policy.allCases.map(\.rawValue)))!
        }
        if let r = try reader.optional("factors") {
            let names = OktaIDXService.factorNames
            options.factors = try r.elements().map { element throws(ProfileError) in try element.oneOf(names) }
            guard !options.factors.isEmpty else { throw r.error("must name at least one of: \(names.joined(separator: ", "))") }
            guard Set(options.factors).count == options.factors.count else { throw r.error("must not name a factor twice") }
        }
        if let r = try reader.optional("requireEnrollment") { options.requireEnrollment = try r.bool() }
        if let r = try reader.optional("clientId") { options.clientID = try r.string() }
        if let r = try reader.optional("password") { options.password = try r.string() }
        if let r = try reader.optional("passcode") {
            options.passcode = try r.string()
            guard !options.passcode.isEmpty else { throw r.error("must not be empty") }
        }
        if let r = try reader.optional("securityAnswer") { options.securityAnswer = try r.string() }
        if let r = try reader.optional("wrongPasscodeRate") { options.wrongPasscodeRate = try r.fraction() }
        if let r = try reader.optional("stateHandleLifetime") { options.stateHandleLifetime = try r.positiveDuration() }
        if let r = try reader.optional("interactionCodeLifetime") { options.interactionCodeLifetime = try r.positiveDuration() }
        if let r = try reader.optional("tokenLifetime") { options.tokenLifetime = try r.positiveDuration() }
        if let r = try reader.optional("rateLimit") {
            try r.rejectUnknownKeys(allowed: ["limit", "window", "paths"])
            let limitReader = try r.required("limit")
            let limit = try limitReader.int()
            guard limit >= 0 else { throw limitReader.error("must be 0 or more, found \(limit)") }
            var rateLimit = OktaIDXService.RateLimit(limit: limit)
            if let w = try r.optional("window") {
                rateLimit.window = try w.positiveDuration()
                guard rateLimit.window.components.attoseconds == 0 else {
                    throw w.error("must be whole seconds (X-Rate-Limit-Reset is in seconds)")
                }
            }
            if let p = try r.optional("paths") {
                rateLimit.paths = try p.elements().map { element throws(ProfileError) in
                    let path = try element.string()
                    guard path.hasPrefix("/") else { throw element.error("must start with '/'") }
                    return path
                }
            }
            options.rateLimit = rateLimit
        }
        if let r = try reader.optional("origin") {
            let origin = try r.string()
            guard origin.hasPrefix("http://") || origin.hasPrefix("https://"), !origin.hasSuffix("/") else {
                throw r.error("must be http(s)://host[:port] without a trailing '/'")
            }
            options.origin = origin
        }
        return options
    }
}
