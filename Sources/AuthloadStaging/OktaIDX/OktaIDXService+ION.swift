import AuthloadCore
import AuthloadWire

/// The ION bodies of docs/protocols.md, Okta IDX, built from a transaction's phase.
extension OktaIDXService {
    static let passcodeInvalid = IDXMessage(key: IDXMessageKey.passcodeInvalid, text: "Invalid code. Try again.")
    static let incorrectPassword = IDXMessage(key: IDXMessageKey.incorrectPassword, text: "Password is incorrect")
    static let sessionExpired = IDXMessage(key: IDXMessageKey.sessionExpired, text: "The session has expired.")
    static let rateLimitMessage = IDXMessage(key: IDXMessageKey.rateLimited, text: "API call exceeded rate limit due to too many requests.")
    static let invalidRequest = IDXMessage(key: IDXMessageKey.invalidRequest, text: "The request is not valid in this state.")
    static let answerInvalid = IDXMessage(key: IDXMessageKey.answerInvalid, text: "Your answer doesn't match our records.")

    /// Ours: the authenticator id of a method: one email authenticator, one phone authenticator for SMS and voice.
    static func authenticatorID(_ method: String) -> String { method == "email" ? "aut-email" : "aut-phone" }
    static let passwordAuthenticatorID = "aut-password"
    /// Ours: the one question the staging org asks.
    static let questionKey = "disliked_food"

    /// The transaction's current state as ION, optionally with an ERROR on the passcode field or at the top: the
    /// template of its shape (``IONTemplate``) filled with its handle, origin, expiry and user.
    func ion(
        _ transaction: OktaIDXTransaction, handle: String, origin: String, status: Int = 200,
        passcodeError: IDXMessage? = nil, topError: IDXMessage? = nil
    ) -> HTTPResponse {
        let shape = IONShape.state(
            phase: transaction.phase, passwordDone: transaction.passwordDone, hasUser: !transaction.username.isEmpty, status: status,
            passcodeError: passcodeError, topError: topError)
        let template = template(shape) {
            var placeholder = transaction
            if !placeholder.username.isEmpty { placeholder.username = IONTemplate.marker(.username) }
            return ionTree(
                placeholder, handle: IONTemplate.marker(.handle), origin: IONTemplate.marker(.origin),
                expires: IONTemplate.marker(.expires), passcodeError: passcodeError, topError: topError)
        }
        let values = IONTemplate.Values(
            handle: handle, origin: origin, expires: transaction.expiresAtText, username: transaction.username)
        return Self.ionResponse(status: status, template.filled(values))
    }

    /// The template of `shape`, made from the tree `build` returns the first time the shape is asked for.
    private func template(_ shape: IONShape, build: () -> JSONValue) -> IONTemplate {
        if let known = templates.withLock({ $0[shape] }) { return known }
        let made = IONTemplate(serializing: build())
        templates.withLock { $0[shape] = made }
        return made
    }

    /// The transaction's state as an ION tree, with `handle`, `origin` and `expires` written where they go.
    func ionTree(
        _ transaction: OktaIDXTransaction, handle: String, origin: String, expires: String, passcodeError: IDXMessage? = nil,
        topError: IDXMessage? = nil
    ) -> JSONValue {
        var body = envelope(handle: handle, expires: expires, origin: origin)
        var remediations: [IDXRemediation] = []
        let stateField = IDXField(name: "stateHandle", required: true, visible: false, mutable: false, value: .string(handle))
        let passcode = { (label: String) in
            IDXField(
                name: "credentials", type: "object", required: true,
                form: [
                    IDXField(name: "passcode", label: label, secret: true, messages: passcodeError.map { [$0] } ?? [])
                ])
        }
        switch transaction.phase {
        case .identify:
            var fields = [IDXField(name: "identifier", label: "Username", required: true)]
            if options.policy == .singleForm { fields.append(passcode("Password")) }
            fields += [IDXField(name: "rememberMe", label: "Remember this device", type: "boolean"), stateField]
            remediations.append(IDXRemediation(name: "identify", href: origin + IDXPaths.identify, fields: fields))
        case .password:
            remediations.append(
                IDXRemediation(
                    name: "challenge-authenticator", href: origin + IDXPaths.answer,
                    relatesTo: ["$.currentAuthenticatorEnrollment"], fields: [passcode("Password"), stateField]))
            body.set(
                "currentAuthenticatorEnrollment",
                [
                    "type": "object",
                    "value": [
                        "type": "password", "key": "okta_password", "id": "lae-password", "displayName": "Password",
                        "methods": [["type": "password"]]
                    ]
                ])
        case .select:
            var offered = offeredAuthenticators
            if self.options.policy == .selectFirst && !transaction.passwordDone {
                // As real orgs list them: the first factor, then the password, then the rest.
                offered.insert(Self.passwordAuthenticator, at: min(1, offered.count))
            }
            let methodless = self.options.policy == .selectFirst
            let options = offered.enumerated().map { index, authenticator in
                IDXOption(
                    label: authenticator["displayName"]?.stringValue ?? "", form: authenticatorForm(authenticator, methodless: methodless),
                    relatesTo: "$.authenticatorEnrollments.value[\(index)]")
            }
            let name = self.options.requireEnrollment ? "select-authenticator-enroll" : "select-authenticator-authenticate"
            let href = origin + (self.options.requireEnrollment ? IDXPaths.enroll : IDXPaths.challenge)
            remediations.append(
                IDXRemediation(
                    name: name, href: href,
                    fields: [
                        IDXField(name: "authenticator", type: "object", required: true, options: options), stateField
                    ]))
            body.set("authenticators", ["type": "array", "value": .array(offered)])
            body.set("authenticatorEnrollments", ["type": "array", "value": .array(offered)])
        case .verificationData:
            let phone = Self.phoneAuthenticator(methods: phoneMethods)
            remediations.append(
                IDXRemediation(
                    name: "authenticator-verification-data", href: origin + IDXPaths.challenge,
                    relatesTo: ["$.currentAuthenticatorEnrollment"],
                    fields: [
                        IDXField(name: "authenticator", label: "Phone", form: authenticatorForm(phone, methodless: false)), stateField
                    ]))
            body.set("currentAuthenticatorEnrollment", ["type": "object", "value": phone])
        case .question:
            remediations.append(
                IDXRemediation(
                    name: "challenge-authenticator", href: origin + IDXPaths.answer,
                    relatesTo: ["$.currentAuthenticatorEnrollment"],
                    fields: [
                        IDXField(
                            name: "credentials", type: "object", required: true,
                            form: [
                                IDXField(name: "questionKey", required: true, mutable: false, value: .string(Self.questionKey)),
                                IDXField(
                                    name: "answer", label: "Answer", required: true, secret: true,
                                    messages: passcodeError.map { [$0] } ?? [])
                            ]),
                        stateField
                    ]))
            body.set(
                "currentAuthenticatorEnrollment",
                [
                    "type": "object",
                    "value": [
                        "type": "security_question", "key": "security_question", "id": "qae-authload", "displayName": "Security Question",
                        "methods": [["type": "security_question"]],
                        "profile": ["question": "What is the food you least liked as a child?", "questionKey": .string(Self.questionKey)]
                    ]
                ])
        case .code(let method, let enrolling):
            // Enrolling, the authenticator is the org's (`currentAuthenticator`), not yet the user's enrollment.
            let current = enrolling ? "currentAuthenticator" : "currentAuthenticatorEnrollment"
            remediations.append(
                IDXRemediation(
                    name: enrolling ? "enroll-authenticator" : "challenge-authenticator", href: origin + IDXPaths.answer,
                    relatesTo: ["$." + current], fields: [passcode("Enter code"), stateField]))
            var authenticator =
                (method == "email" ? Self.emailAuthenticator : Self.phoneAuthenticator(methods: [method])).objectValue ?? JSONObject()
            authenticator.set("resend", IDXRemediation(name: "resend", href: origin + IDXPaths.resend, fields: [stateField]).json)
            if method == "email" {
                let poll = IDXRemediation(name: "poll", href: origin + IDXPaths.poll, fields: [stateField], refresh: .seconds(4))
                authenticator.set("poll", poll.json)
            }
            body.set(current, ["type": "object", "value": .object(authenticator)])
        }
        if !transaction.username.isEmpty {
            body.set("user", ["type": "object", "value": ["id": "00u-authload", "identifier": .string(transaction.username)]])
        }
        body.set("remediation", ["type": "array", "value": .array(remediations.map(\.json))])
        if let topError { body.set("messages", IDXMessage.ion([topError])) }
        return .object(body)
    }

    /// `idx.session.expired` with no way on: the client must start over.
    func expired(_ origin: String) -> HTTPResponse {
        var body = JSONObject()
        body.set("version", "1.0.0")
        body.set("messages", IDXMessage.ion([Self.sessionExpired]))
        body.set("intent", "LOGIN")
        return Self.ionResponse(status: 401, JSONValue.object(body).serialized())
    }

    /// A call the transaction's state does not allow, or a form missing what it needs: the state again, with an ERROR.
    func invalid(_ transaction: OktaIDXTransaction, handle: String, origin: String) -> HTTPResponse {
        ion(transaction, handle: handle, origin: origin, status: 400, topError: Self.invalidRequest)
    }

    /// `successWithInteractionCode`: the token endpoint, the code, and the verifier left for the client.
    func success(_ transaction: OktaIDXTransaction, code: String, origin: String) -> HTTPResponse {
        let template = template(.success) {
            successTree(username: IONTemplate.marker(.username), code: IONTemplate.marker(.code), origin: IONTemplate.marker(.origin))
        }
        return Self.ionResponse(
            status: 200, template.filled(IONTemplate.Values(origin: origin, username: transaction.username, code: code)))
    }

    func successTree(username: String, code: String, origin: String) -> JSONValue {
        var body = envelope(handle: nil, expires: nil, origin: origin)
        body.set("user", ["type": "object", "value": ["id": "00u-authload", "identifier": .string(username)]])
        let form = IDXRemediation(
            name: "issue", href: origin + options.paths.token, accepts: IDXMediaType.form, produces: nil,
            fields: [
                IDXField(name: "grant_type", required: true, value: "interaction_code"),
                IDXField(name: "interaction_code", required: true, value: .string(code)),
                IDXField(name: "client_id", required: true, value: .string(options.clientID ?? "authload")),
                IDXField(name: "client_secret", required: true),
                IDXField(name: "code_verifier", required: true)
            ])
        body.set("successWithInteractionCode", form.json)
        return .object(body)
    }

    /// The members every IDX state has (docs/protocols.md, Okta IDX).
    private func envelope(handle: String?, expires: String?, origin: String) -> JSONObject {
        var body = JSONObject()
        body.set("version", "1.0.0")
        if let handle { body.set("stateHandle", .string(handle)) }
        if let expires { body.set("expiresAt", .string(expires)) }
        body.set("intent", "LOGIN")
        if let handle {
            let stateField = IDXField(name: "stateHandle", required: true, visible: false, mutable: false, value: .string(handle))
            body.set("cancel", IDXRemediation(name: "cancel", href: origin + IDXPaths.cancel, fields: [stateField]).json)
        }
        body.set("app", ["type": "object", "value": ["id": "0oa-authload", "label": "authload", "name": "oidc_client"]])
        return body
    }

    /// The authenticators `select-authenticator-*` offers besides the password: the email, and the phone with the
    /// methods on offer, in the order of `factors`.
    private var offeredAuthenticators: [JSONValue] {
        var offered: [JSONValue] = []
        for method in options.factors {
            if method == "email" {
                offered.append(Self.emailAuthenticator)
            } else if !offered.contains(where: { $0["type"] == "phone" }) {
                offered.append(Self.phoneAuthenticator(methods: phoneMethods))
            }
        }
        return offered
    }

    /// The form of one authenticator option: its id, and its method fixed (email, password) or offered (phone:
    /// SMS, voice); a `methodless` phone leaves the method to `authenticator-verification-data`, as real orgs do.
    private func authenticatorForm(_ authenticator: JSONValue, methodless: Bool) -> [IDXField] {
        let id = IDXField(name: "id", required: true, mutable: false, value: authenticator["id"])
        let methods = (authenticator["methods"]?.arrayValue ?? []).compactMap { $0["type"]?.stringValue }
        guard authenticator["type"] == "phone" else {
            return [id, IDXField(name: "methodType", required: false, mutable: false, value: methods.first.map(JSONValue.string))]
        }
        let enrollment = IDXField(name: "enrollmentId", required: true, mutable: false, value: "pae-authload")
        if methodless { return [id, enrollment] }
        let offered = methods.map { IDXOption(label: $0 == "sms" ? "SMS" : "Voice call", value: .string($0)) }
        return [id, IDXField(name: "methodType", type: "string", required: false, options: offered), enrollment]
    }

    static let emailAuthenticator: JSONValue = [
        "type": "email", "key": "okta_email", "id": .string(authenticatorID("email")), "displayName": "Email",
        "methods": [["type": "email"]]
    ]

    static let passwordAuthenticator: JSONValue = [
        "type": "password", "key": "okta_password", "id": .string(passwordAuthenticatorID), "displayName": "Password",
        "methods": [["type": "password"]]
    ]

    static func phoneAuthenticator(methods: [String]) -> JSONValue {
        [
            "type": "phone", "key": "phone_number", "id": .string(authenticatorID("sms")), "displayName": "Phone",
            "methods": .array(methods.map { ["type": .string($0)] })
        ]
    }

    /// An instant since the Unix epoch as ION dates it, to the millisecond.
    static func iso8601(_ time: Duration) -> String {
        HTTPDate.iso8601(epochMilliseconds: time.components.seconds * 1000 + time.components.attoseconds / 1_000_000_000_000_000)
    }

    static func ionResponse(status: Int, _ body: [UInt8]) -> HTTPResponse {
        HTTPResponse(status: status, headers: ionHeaders, body: body)
    }

    /// Made once and shared, as ``HTTPResponse/jsonHeaders`` is: built from a literal, two allocations an answer.
    static let ionHeaders: HTTPHeaders = ["Content-Type": IDXMediaType.ion]
}
