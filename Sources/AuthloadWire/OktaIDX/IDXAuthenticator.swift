import AuthloadCore

/// An authenticator as an IDX state describes it (docs/protocols.md, Okta IDX): in `authenticators`,
/// `authenticatorEnrollments`, or as the one being challenged (`currentAuthenticator`, `currentAuthenticatorEnrollment`).
///
/// A remediation option points at one with `relatesTo` (`$.authenticatorEnrollments.value[1]`), which is how a
/// client learns that an option without a `methodType` is the phone, or that a challenge asks for the password.
public struct IDXAuthenticator: Sendable, Equatable {
    /// `password`, `email`, `phone`, `app` (Okta Verify), `security_question`, …
    public var type: String
    public var id: String?
    public var key: String?
    /// The method types it offers (`sms`, `voice`; `push`, `totp`), in the server's order.
    public var methods: [String]
    /// The question a `security_question` authenticator asks, when the state shows it.
    public var questionKey: String?

    public init(type: String, id: String? = nil, key: String? = nil, methods: [String] = [], questionKey: String? = nil) {
        self.type = type
        self.id = id
        self.key = key
        self.methods = methods
        self.questionKey = questionKey
    }

    /// True when choosing this authenticator can mean `method`: one of its methods, or its own type
    /// (`password`, `email`, `security_question` have a single method named after them).
    public func offers(method: String) -> Bool {
        type == method || methods.contains(method)
    }
}
