import AuthloadCore

/// Where one IDX login stands on the server, keyed by its state handle.
struct OktaIDXTransaction: Sendable {
    enum Phase: Sendable, Equatable {
        case identify
        /// Identifier-first: the password is challenged after the identifier.
        case password
        case select
        /// A code was sent by this method (`email`, `sms`).
        case code(method: String)
    }

    var phase = Phase.identify
    var username = ""
    /// The PKCE challenge from interact, checked at the token endpoint.
    var codeChallenge: String
    /// Time since the Unix epoch after which every call answers `idx.session.expired`.
    var expiresAt: Duration
    /// Wrong passcodes so far (for lockout).
    var failedPasscodes = 0
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
