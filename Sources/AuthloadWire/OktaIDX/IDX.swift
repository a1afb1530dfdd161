import AuthloadCore

// The Okta Identity Engine (IDX) vocabulary of docs/protocols.md, Okta IDX, shared by the flow and the staging service
// so the two read and write the same ION shapes.

/// Content types of the IDX protocol (docs/protocols.md, Okta IDX).
public enum IDXMediaType {
    /// What IDX responses are (`produces`) and what clients ask for (`Accept`).
    public static let ion = "application/ion+json; okta-version=1.0.0"
    /// What live remediations accept.
    public static let json = "application/json; okta-version=1.0.0"
    /// What interact and token accept.
    public static let form = "application/x-www-form-urlencoded"
}

/// Where the IDX endpoints are: the authorization server's (`{issuerPath}/v1/…`) and the origin's `/idp/idx/…`.
public struct IDXPaths: Sendable, Equatable {
    /// The issuer's path on the target, e.g. `/oauth2/default` (empty for the org authorization server,
    /// whose endpoints are `/oauth2/v1/…`).
    public var issuerPath = "/oauth2/default"

    public init() {}

    /// `{issuer}/v1/interact`, with `/oauth2` added for an org issuer as the Swift SDK does (docs/protocols.md, Okta IDX).
    public var interact: String { authorizationServer + "/v1/interact" }
    /// `{issuer}/v1/token`: where the staging service points `successWithInteractionCode`.
    public var token: String { authorizationServer + "/v1/token" }

    private var authorizationServer: String { issuerPath.hasPrefix("/oauth2") ? issuerPath : issuerPath + "/oauth2" }

    /// The IDX endpoints always live at the origin (docs/protocols.md, Okta IDX).
    public static let idxPrefix = "/idp/idx"
    public static let introspect = idxPrefix + "/introspect"
    public static let identify = idxPrefix + "/identify"
    public static let challenge = idxPrefix + "/challenge"
    public static let answer = idxPrefix + "/challenge/answer"
    public static let resend = idxPrefix + "/challenge/resend"
    public static let poll = idxPrefix + "/challenge/poll"
    public static let skip = idxPrefix + "/skip"
    public static let cancel = idxPrefix + "/cancel"
    public static let enroll = idxPrefix + "/credential/enroll"
}

/// Well-known i18n keys of IDX ERROR messages (docs/protocols.md, Okta IDX).
public enum IDXMessageKey {
    public static let passcodeInvalid = "api.authn.error.PASSCODE_INVALID"
    public static let sessionExpired = "idx.session.expired"
    /// What Okta answers a wrong password with (inferred from its SDKs, not documented).
    public static let incorrectPassword = "incorrectPassword"
    /// An identifier the org does not know (inferred from its SDKs, not documented).
    public static let unknownUser = "idx.unknown.user"
    public static let answerInvalid = "authfactor.challenge.question_factor.answer_invalid"
    /// Ours: the ERROR a rate-limited `/challenge/answer` carries in its ION body (Okta's error code E0000047).
    public static let rateLimited = "E0000047"
    /// Ours: a remediation call the state does not allow, or a form without its required fields.
    public static let invalidRequest = "api.idx.invalid.request"
}

/// One entry of an ION `messages` array: a class (`ERROR`, `INFO`), an i18n key and the text for people.
public struct IDXMessage: Sendable, Hashable {
    public var level: String
    public var key: String
    public var text: String

    public init(level: String = "ERROR", key: String, text: String) {
        self.level = level
        self.key = key
        self.text = text
    }

    public var isError: Bool { level == "ERROR" }
}

/// A field of a remediation form (docs/protocols.md, Okta IDX): a scalar, a nested form, or a choice among options.
public struct IDXField: Sendable, Equatable {
    public var name: String
    public var label: String?
    public var type: String?
    public var required = false
    public var secret = false
    public var visible: Bool?
    public var mutable: Bool?
    /// The value the server filled in (e.g. `stateHandle`), if any.
    public var value: JSONValue?
    /// The nested fields of an object field (`credentials` → `passcode`).
    public var form: [IDXField]?
    public var options: [IDXOption] = []
    public var messages: [IDXMessage] = []

    public init(
        name: String, label: String? = nil, type: String? = nil, required: Bool = false, secret: Bool = false,
        visible: Bool? = nil, mutable: Bool? = nil, value: JSONValue? = nil, form: [IDXField]? = nil,
        options: [IDXOption] = [], messages: [IDXMessage] = []
    ) {
        self.name = name
        self.label = label
        self.type = type
        self.required = required
        self.secret = secret
        self.visible = visible
        self.mutable = mutable
        self.value = value
        self.form = form
        self.options = options
        self.messages = messages
    }

    /// ERROR messages on this field and on the fields nested in it, in form order.
    var errors: [IDXMessage] {
        messages.filter(\.isError) + (form ?? []).flatMap(\.errors) + options.flatMap { $0.form.flatMap(\.errors) }
    }
}

/// One choice of an `options` field: a scalar value (`"sms"`) or a form of its own (an authenticator).
public struct IDXOption: Sendable, Equatable {
    public var label: String
    /// The scalar value, when the option is not a form.
    public var value: JSONValue?
    /// The option's fields, when its value is `{"form": {"value": [...]}}`.
    public var form: [IDXField]
    public var relatesTo: String?

    public init(label: String, value: JSONValue? = nil, form: [IDXField] = [], relatesTo: String? = nil) {
        self.label = label
        self.value = value
        self.form = form
        self.relatesTo = relatesTo
    }

}

/// A form the server offers as a next step: where to send it, how, and its fields.
public struct IDXRemediation: Sendable, Equatable {
    public var name: String
    public var href: String
    public var method: String
    /// The request content type the server wants; absent means JSON.
    public var accepts: String?
    public var produces: String?
    public var relatesTo: [String]
    public var fields: [IDXField]
    /// How long the server asks a poller to wait before it polls again (`refresh`, milliseconds on the wire).
    public var refresh: Duration?

    public init(
        name: String, href: String, method: String = "POST", accepts: String? = IDXMediaType.json,
        produces: String? = IDXMediaType.ion, relatesTo: [String] = [], fields: [IDXField], refresh: Duration? = nil
    ) {
        self.name = name
        self.href = href
        self.method = method
        self.accepts = accepts
        self.produces = produces
        self.relatesTo = relatesTo
        self.fields = fields
        self.refresh = refresh
    }

    /// The href's path and query: IDX hrefs are absolute (`https://{org}/idp/idx/…`), but every request
    /// goes to the profile's target, so only the part after the origin is used.
    public var targetPath: String {
        guard !href.hasPrefix("/"), let colon = href.firstIndex(of: ":"), href[colon...].hasPrefix("://") else { return href }
        let rest = href[href.index(colon, offsetBy: 3)...]
        guard let slash = rest.firstIndex(of: "/") else { return "/" }
        return String(rest[slash...])
    }
}

/// What one IDX response says, read from its ION body (docs/protocols.md, Okta IDX).
public struct IDXResponse: Sendable {
    /// The state handle and the expiry, made into strings from the body when asked for: a client sends back the handle
    /// its forms hold and never reads these, each a string with storage of its own at every state.
    public var stateHandle: String? { string(at: stateHandleValue) }
    public var expiresAt: String? { string(at: expiresAtValue) }
    public var remediations: [IDXRemediation]
    /// Top-level messages (e.g. `idx.session.expired`).
    public var messages: [IDXMessage]
    /// The `successWithInteractionCode` form: the login is done, the token request is next.
    public var success: IDXRemediation?
    /// The authenticator being challenged or enrolled (`currentAuthenticatorEnrollment`, else `currentAuthenticator`).
    public var currentAuthenticator: IDXAuthenticator?
    /// The org's authenticators and the user's enrollments, which options' `relatesTo` paths point into.
    ///
    /// Read from the body when asked for: a client follows a `relatesTo` only for an option that names no method (a
    /// phone), and reading both lists at every state was a fifth of reading a select state. The body was checked whole
    /// when it was read, so reading them again cannot fail.
    public var authenticators: [IDXAuthenticator] { authenticators(in: authenticatorsValue) }
    public var authenticatorEnrollments: [IDXAuthenticator] { authenticators(in: enrollmentsValue) }

    /// The body, kept for the members read when asked for, and where their values lie in it (strings' with their
    /// quotes).
    private let body: [UInt8]
    var stateHandleValue: Range<Int>?
    var expiresAtValue: Range<Int>?
    var authenticatorsValue: Range<Int>?
    var enrollmentsValue: Range<Int>?

    /// The `type` of the authenticator being challenged (`password`, `email`, `phone`), if any.
    public var currentAuthenticatorType: String? { currentAuthenticator?.type }

    /// Reads an ION body; nil when it is not a JSON object with at least a state handle, remediations,
    /// messages or a success form.
    public init?(body: [UInt8]) {
        remediations = []
        messages = []
        success = nil
        currentAuthenticator = nil
        self.body = body
        var isObject = false
        do {
            try JSONReader.read(body) { reader throws(JSONParseError) in isObject = try self.read(&reader) }
        } catch {
            return nil
        }
        guard isObject, stateHandleValue != nil || !remediations.isEmpty || !messages.isEmpty || success != nil else { return nil }
    }

    /// The authenticator a `relatesTo` path names: `$.authenticators.value[i]`, `$.authenticatorEnrollments.value[i]`,
    /// `$.currentAuthenticator` or `$.currentAuthenticatorEnrollment`; nil for any other path or an index out of range.
    public func authenticator(relatedTo path: String) -> IDXAuthenticator? {
        if path == "$.currentAuthenticator" || path == "$.currentAuthenticatorEnrollment" { return currentAuthenticator }
        // Only the list the path names is read.
        for (prefix, value) in [("$.authenticators.value[", authenticatorsValue), ("$.authenticatorEnrollments.value[", enrollmentsValue)]
        where path.hasPrefix(prefix) && path.hasSuffix("]") {
            let list = authenticators(in: value)
            guard let index = Int(path.dropFirst(prefix.count).dropLast()), list.indices.contains(index) else { return nil }
            return list[index]
        }
        return nil
    }

    /// The string at `value` in the body, decoded; nil when there is none.
    private func string(at value: Range<Int>?) -> String? {
        guard let value else { return nil }
        var string: String?
        try? JSONReader.read(Array(body[value])) { reader throws(JSONParseError) in string = try reader.string() }
        return string
    }

    /// The authenticators of the ION collection at `value` in the body; empty when there is none.
    private func authenticators(in value: Range<Int>?) -> [IDXAuthenticator] {
        guard let value else { return [] }
        var list: [IDXAuthenticator] = []
        try? JSONReader.read(Array(body[value])) { reader throws(JSONParseError) in
            list = try reader.ionCollection(IDXAuthenticator.read)
        }
        return list
    }

    /// Every ERROR message: top-level first, then those on fields, remediation by remediation.
    public var errors: [IDXMessage] {
        messages.filter(\.isError) + remediations.flatMap { $0.fields.flatMap(\.errors) }
    }

    /// The first of ``errors``, found without building the list, each remediation read in place.
    public var firstError: IDXMessage? {
        for index in messages.indices where messages[index].isError { return messages[index] }
        for index in remediations.indices {
            if let error = remediations[index].fields.firstError { return error }
        }
        return nil
    }
}

extension Array where Element == IDXField {
    /// The first ERROR message on these fields, in form order: a field's own, then its form's, then its options' forms'.
    ///
    /// Found without building ``IDXField/errors``, which every answer of a login would allocate only to find it empty,
    /// and read through the buffer member by member: a field handed to a property of its own, or bound to a name, was
    /// copied whole, every string and list in it retained and released.
    var firstError: IDXMessage? {
        withUnsafeBufferPointer { fields in
            for index in fields.indices {
                if !fields[index].messages.isEmpty, let error = fields[index].messages.first(where: \.isError) { return error }
                if let error = fields[index].form?.firstError { return error }
                for option in fields[index].options.indices {
                    if let error = fields[index].options[option].form.firstError { return error }
                }
            }
            return nil
        }
    }
}
