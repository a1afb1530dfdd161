import AuthloadCore
import AuthloadWire

/// The ION bodies of docs/protocols.md, Okta IDX, built from a transaction's phase.
extension OktaIDXService {
    static let passcodeInvalid = IDXMessage(key: IDXMessageKey.passcodeInvalid, text: "Invalid code. Try again.")
    static let incorrectPassword = IDXMessage(key: IDXMessageKey.incorrectPassword, text: "Password is incorrect")
    static let sessionExpired = IDXMessage(key: IDXMessageKey.sessionExpired, text: "The session has expired.")
    static let rateLimitMessage = IDXMessage(key: IDXMessageKey.rateLimited, text: "API call exceeded rate limit due to too many requests.")
    static let invalidRequest = IDXMessage(key: IDXMessageKey.invalidRequest, text: "The request is not valid in this state.")

    /// [M] The authenticator id of a method: one email authenticator, one phone authenticator for SMS.
    static func authenticatorID(_ method: String) -> String { method == "email" ? "aut-email" : "aut-phone" }

    /// The transaction's current state as ION, optionally with an ERROR on the passcode field or at the top.
    func ion(
        _ transaction: OktaIDXTransaction, handle: String, origin: String, status: Int = 200,
        passcodeError: IDXMessage? = nil, topError: IDXMessage? = nil
    ) -> HTTPResponse {
        var body = envelope(handle: handle, expiresAt: transaction.expiresAt, origin: origin)
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
            let options = self.options.factors.enumerated().map { index, method in
                IDXOption(
                    label: method == "email" ? "Email" : "Phone", form: authenticatorForm(method),
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
            let authenticators = JSONValue.array(self.options.factors.map(Self.authenticator))
            body.set("authenticators", ["type": "array", "value": authenticators])
            body.set("authenticatorEnrollments", ["type": "array", "value": authenticators])
        case .code(let method):
            remediations.append(
                IDXRemediation(
                    name: "challenge-authenticator", href: origin + IDXPaths.answer,
                    relatesTo: ["$.currentAuthenticatorEnrollment"], fields: [passcode("Enter code"), stateField]))
            var current = Self.authenticator(method).objectValue ?? JSONObject()
            current.set("resend", IDXRemediation(name: "resend", href: origin + IDXPaths.resend, fields: [stateField]).json)
            if method == "email" {
                var poll = IDXRemediation(name: "poll", href: origin + IDXPaths.poll, fields: [stateField]).json.objectValue ?? JSONObject()
                poll.set("refresh", 4000)
                current.set("poll", .object(poll))
            }
            body.set("currentAuthenticatorEnrollment", ["type": "object", "value": .object(current)])
        }
        if !transaction.username.isEmpty {
            body.set("user", ["type": "object", "value": ["id": "00u-authload", "identifier": .string(transaction.username)]])
        }
        body.set("remediation", ["type": "array", "value": .array(remediations.map(\.json))])
        if let topError { body.set("messages", IDXMessage.ion([topError])) }
        return Self.ionResponse(status: status, .object(body))
    }

    /// `idx.session.expired` with no way on: the client must start over.
    func expired(_ origin: String) -> HTTPResponse {
        var body = JSONObject()
        body.set("version", "1.0.0")
        body.set("messages", IDXMessage.ion([Self.sessionExpired]))
        body.set("intent", "LOGIN")
        return Self.ionResponse(status: 401, .object(body))
    }

    /// A call the transaction's state does not allow, or a form missing what it needs: the state again, with an ERROR.
    func invalid(_ transaction: OktaIDXTransaction, handle: String, origin: String) -> HTTPResponse {
        ion(transaction, handle: handle, origin: origin, status: 400, topError: Self.invalidRequest)
    }

    /// `successWithInteractionCode`: the token endpoint, the code, and the verifier left for the client.
    func success(_ transaction: OktaIDXTransaction, code: String, origin: String) -> HTTPResponse {
        var body = envelope(handle: nil, expiresAt: nil, origin: origin)
        body.set("user", ["type": "object", "value": ["id": "00u-authload", "identifier": .string(transaction.username)]])
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
        return Self.ionResponse(status: 200, .object(body))
    }

    /// The members every IDX state has (docs/protocols.md, Okta IDX).
    private func envelope(handle: String?, expiresAt: Duration?, origin: String) -> JSONObject {
        var body = JSONObject()
        body.set("version", "1.0.0")
        if let handle { body.set("stateHandle", .string(handle)) }
        if let expiresAt {
            let millis = expiresAt.components.seconds * 1000 + expiresAt.components.attoseconds / 1_000_000_000_000_000
            body.set("expiresAt", .string(HTTPDate.iso8601(epochMilliseconds: millis)))
        }
        body.set("intent", "LOGIN")
        if let handle {
            let stateField = IDXField(name: "stateHandle", required: true, visible: false, mutable: false, value: .string(handle))
            body.set("cancel", IDXRemediation(name: "cancel", href: origin + IDXPaths.cancel, fields: [stateField]).json)
        }
        body.set("app", ["type": "object", "value": ["id": "0oa-authload", "label": "authload", "name": "oidc_client"]])
        return body
    }

    /// The form of one authenticator option: its id, and its method fixed (email) or offered (phone: SMS).
    private func authenticatorForm(_ method: String) -> [IDXField] {
        let id = IDXField(name: "id", required: true, mutable: false, value: .string(Self.authenticatorID(method)))
        if method == "email" { return [id, IDXField(name: "methodType", required: false, mutable: false, value: "email")] }
        return [
            id, IDXField(name: "methodType", type: "string", required: false, options: [IDXOption(label: "SMS", value: "sms")]),
            IDXField(name: "enrollmentId", required: true, mutable: false, value: "pae-authload")
        ]
    }

    private static func authenticator(_ method: String) -> JSONValue {
        let email = method == "email"
        return [
            "type": .string(email ? "email" : "phone"), "key": .string(email ? "okta_email" : "phone_number"),
            "id": .string(authenticatorID(method)), "displayName": .string(email ? "Email" : "Phone"),
            "methods": [["type": .string(method)]]
        ]
    }

    static func ionResponse(status: Int, _ body: JSONValue) -> HTTPResponse {
        HTTPResponse(status: status, headers: ["Content-Type": IDXMediaType.ion], body: body.serialized())
    }
}
