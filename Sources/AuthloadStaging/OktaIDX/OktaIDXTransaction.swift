import AuthloadCore

/// Where one IDX login stands on the server, keyed by its state handle.
struct OktaIDXTransaction: Sendable {
    enum Phase: Sendable, Hashable {
        case identify
        /// The password is challenged.
        case password
        /// The user picks an authenticator (the password among them under `select-first`).
        case select
        /// The phone was picked without a method: SMS or voice is asked for (`authenticator-verification-data`).
        case verificationData
        /// A code was sent by this method (`email`, `sms`, `voice`); `enrolling` when it enrolls the authenticator.
        case code(method: String, enrolling: Bool)
        /// The security question is asked.
        case question
    }

    var phase: Phase
    /// What the user has proven so far: the policy asks for both before it hands out a code.
    var passwordDone: Bool
    var factorDone: Bool
    var username: String
    /// The PKCE challenge from interact, checked at the token endpoint.
    var codeChallenge: String
    /// Time since the Unix epoch after which every call answers `idx.session.expired`.
    let expiresAt: Duration
    /// `expiresAt` as ION dates it (``OktaIDXService/iso8601(_:)``): written once, where every answer of the
    /// transaction formatted it again; the service hands it over formatted (``OktaIDXService/expiryText(_:)``).
    let expiresAtText: String
    /// Wrong passcodes so far (for lockout).
    var failedPasscodes: Int

    init(
        phase: Phase = .identify, passwordDone: Bool = false, factorDone: Bool = false, username: String = "", codeChallenge: String,
        expiresAt: Duration, expiresAtText: String? = nil, failedPasscodes: Int = 0
    ) {
        self.phase = phase
        self.passwordDone = passwordDone
        self.factorDone = factorDone
        self.username = username
        self.codeChallenge = codeChallenge
        self.expiresAt = expiresAt
        self.expiresAtText = expiresAtText ?? OktaIDXService.iso8601(expiresAt)
        self.failedPasscodes = failedPasscodes
    }
}

/// An interaction handle from `/v1/interact`, waiting to be introspected.
struct OktaIDXInteraction: Sendable {
    var codeChallenge: String
    var expiresAt: Duration
    /// The transaction introspect started for this handle, so a second introspect resumes it.
    var stateHandle: String?
}

/// An issued `interaction_code`, redeemable once at the token endpoint.
struct OktaIDXGrant: Sendable {
    var codeChallenge: String
    var username: String
    var expiresAt: Duration
}
