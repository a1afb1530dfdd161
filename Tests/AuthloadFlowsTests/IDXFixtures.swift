import AuthloadCore
import AuthloadWire

/// IDX states in the shapes real orgs send (written for these tests after the responses in Okta's SDK test suites):
/// absolute hrefs on another origin, options that point into `authenticatorEnrollments`, a phone offered without a
/// method, Okta Verify's push polled at `refresh`.
enum IDXFixtures {
    static let origin = "https://example.okta.com"
    static let handle = "02tYS1NHhCPLcOpT3GByBBRHmGU63p7LGRXJx5cOvp"

    static func state(_ members: String) -> IDXResponse {
        guard let response = IDXResponse(body: body(members)) else { fatalError("fixture is not ION: \(members)") }
        return response
    }

    static func body(_ members: String) -> [UInt8] {
        Array(#"{"version": "1.0.0", "stateHandle": "\#(handle)", "intent": "LOGIN", \#(members)}"#.utf8)
    }

    static let stateField = #"{"name": "stateHandle", "required": true, "value": "\#(handle)", "visible": false, "mutable": false}"#

    static func remediation(_ name: String, path: String, fields: String, extra: String = "") -> String {
        #"{"rel": ["create-form"], "name": "\#(name)", "href": "\#(origin)\#(path)", "method": "POST", "#
            + #""accepts": "application/json; okta-version=1.0.0", "produces": "application/ion+json; okta-version=1.0.0", "#
            + #"\#(extra)"value": [\#(fields)]}"#
    }

    static func remediations(_ items: String...) -> String {
        #""remediation": {"type": "array", "value": [\#(items.joined(separator: ", "))]}"#
    }

    static let cancel = remediation("cancel", path: "/idp/idx/cancel", fields: stateField)

    static let identify = state(
        remediations(
            remediation(
                "identify", path: "/idp/idx/identify",
                fields: #"{"name": "identifier", "label": "Username", "required": true}, "#
                    + #"{"name": "rememberMe", "type": "boolean", "label": "Remember this device"}, \#(stateField)"#),
            remediation("redirect-idp", path: "/sso/idps/0oa1", fields: ""), cancel))

    static let identifyWithPassword = state(
        remediations(
            remediation(
                "identify", path: "/idp/idx/identify",
                fields: #"{"name": "identifier", "label": "Username", "required": true}, "#
                    + #"{"name": "credentials", "type": "object", "required": true, "form": {"value": [{"name": "passcode", "label": "Password", "secret": true}]}}, \#(stateField)"#
            )
        ))

    /// Email, Password, Phone and Security Question enrollments, as `select-authenticator-authenticate` offers them.
    static let enrollments =
        #""authenticatorEnrollments": {"type": "array", "value": ["#
        + #"{"type": "email", "key": "okta_email", "id": "eae1", "displayName": "Email", "methods": [{"type": "email"}]}, "#
        + #"{"type": "password", "key": "okta_password", "id": "lae1", "displayName": "Password", "methods": [{"type": "password"}]}, "#
        + #"{"type": "phone", "key": "phone_number", "id": "pae1", "displayName": "Phone", "methods": [{"type": "sms"}, {"type": "voice"}]}, "#
        + #"{"type": "security_question", "key": "security_question", "id": "qae1", "displayName": "Security Question", "methods": [{"type": "security_question"}], "profile": {"questionKey": "disliked_food"}}]}"#

    static func option(_ label: String, index: Int, form: String) -> String {
        #"{"label": "\#(label)", "value": {"form": {"value": [\#(form)]}}, "relatesTo": "$.authenticatorEnrollments.value[\#(index)]"}"#
    }

    /// An option whose form fixes its method, as orgs offer the email, the password and the security question.
    static func fixedOption(_ label: String, index: Int, id: String, method: String) -> String {
        option(
            label, index: index,
            form: #"{"name": "id", "required": true, "value": "\#(id)", "mutable": false}, "#
                + #"{"name": "methodType", "required": false, "value": "\#(method)", "mutable": false}"#)
    }

    static let emailOption = fixedOption("Email", index: 0, id: "aut-email", method: "email")
    static let passwordOption = fixedOption("Password", index: 1, id: "aut-password", method: "password")
    /// The phone as real orgs offer it: an id and an enrollment id, its method asked for afterwards.
    static let phoneOption = option(
        "Phone", index: 2,
        form:
            #"{"name": "id", "required": true, "value": "aut-phone", "mutable": false}, {"name": "enrollmentId", "required": true, "value": "pae1", "mutable": false}"#
    )
    static let questionOption = fixedOption("Security Question", index: 3, id: "aut-question", method: "security_question")

    static func select(
        _ options: String..., name: String = "select-authenticator-authenticate", path: String = "/idp/idx/challenge", also: String = ""
    )
        -> IDXResponse
    {
        let field = #"{"name": "authenticator", "type": "object", "options": [\#(options.joined(separator: ", "))]}, \#(stateField)"#
        let extra = also.isEmpty ? [] : [also]
        return state(
            ([remediations(([remediation(name, path: path, fields: field)] + extra + [cancel]).joined(separator: ", "))] + [enrollments])
                .joined(separator: ", "))
    }

    static func remediations(_ items: [String]) -> String { remediations(items.joined(separator: ", ")) }

    static func current(_ authenticator: String, member: String = "currentAuthenticatorEnrollment") -> String {
        #""\#(member)": {"type": "object", "value": \#(authenticator)}"#
    }

    static let passcodeForm =
        #"{"name": "credentials", "type": "object", "required": true, "form": {"value": [{"name": "passcode", "label": "Enter code", "secret": true}]}}, \#(stateField)"#

    static func challenge(_ authenticator: String, name: String = "challenge-authenticator", form: String = passcodeForm) -> IDXResponse {
        state(
            remediations(
                remediation(
                    name, path: "/idp/idx/challenge/answer", fields: form, extra: #""relatesTo": ["$.currentAuthenticatorEnrollment"], "#),
                cancel) + ", " + current(authenticator))
    }

    static let passwordChallenge = challenge(
        #"{"type": "password", "key": "okta_password", "id": "lae1", "displayName": "Password", "methods": [{"type": "password"}]}"#)
    static let emailChallenge = challenge(
        #"{"type": "email", "key": "okta_email", "id": "eae1", "displayName": "Email", "methods": [{"type": "email"}], "#
            + #""poll": {"name": "poll", "href": "\#(origin)/idp/idx/challenge/poll", "method": "POST", "refresh": 4000, "value": [\#(stateField)]}}"#
    )
    static let phoneChallenge = challenge(
        #"{"type": "phone", "key": "phone_number", "id": "pae1", "displayName": "Phone", "methods": [{"type": "sms"}, {"type": "voice"}]}"#)
    static let questionChallenge = challenge(
        #"{"type": "security_question", "key": "security_question", "id": "qae1", "methods": [{"type": "security_question"}], "profile": {"questionKey": "disliked_food"}}"#,
        form: #"{"name": "credentials", "type": "object", "required": true, "form": {"value": ["#
            + #"{"name": "questionKey", "required": true, "value": "disliked_food", "mutable": false}, {"name": "answer", "label": "Answer", "required": true, "secret": true}]}}, \#(stateField)"#
    )

    /// `authenticator-verification-data` after the phone was picked: SMS or voice.
    static let phoneVerificationData = state(
        remediations(
            remediation(
                "authenticator-verification-data", path: "/idp/idx/challenge",
                fields: #"{"name": "authenticator", "label": "Phone", "form": {"value": ["#
                    + #"{"name": "id", "required": true, "value": "aut-phone", "mutable": false}, "#
                    + #"{"name": "methodType", "type": "string", "required": false, "options": [{"label": "SMS", "value": "sms"}, {"label": "Voice call", "value": "voice"}]}, "#
                    + #"{"name": "enrollmentId", "required": true, "value": "pae1", "mutable": false}]}}, \#(stateField)"#,
                extra: #""relatesTo": ["$.currentAuthenticatorEnrollment"], "#), cancel)
            + ", "
            + current(
                #"{"type": "phone", "key": "phone_number", "id": "pae1", "displayName": "Phone", "methods": [{"type": "sms"}, {"type": "voice"}]}"#
            ))

    /// Okta Verify's push sent: `challenge-poll` every `refresh`, beside a select to switch authenticators.
    static let pushPoll = state(pushPollMembers)
    static let pushPollMembers =
        remediations(
            remediation(
                "challenge-poll", path: "/idp/idx/authenticators/poll",
                fields: #"{"name": "autoChallenge", "type": "boolean", "value": true, "mutable": true, "required": false}, \#(stateField)"#,
                extra: #""relatesTo": ["$.currentAuthenticator"], "refresh": 4000, "#),
            remediation(
                "select-authenticator-authenticate", path: "/idp/idx/challenge",
                fields: #"{"name": "authenticator", "options": [\#(emailOption)]}"#),
            cancel)
        + ", "
        + current(
            #"{"type": "app", "key": "okta_verify", "id": "aut-ov", "displayName": "Okta Verify", "methods": [{"type": "push"}]}"#,
            member: "currentAuthenticator")

    static let okVerifyOption =
        #"{"label": "Okta Verify", "value": {"form": {"value": [{"name": "id", "required": true, "value": "aut-ov", "mutable": false}, "#
        + #"{"name": "methodType", "type": "string", "required": false, "options": [{"label": "Enter a code", "value": "totp"}, {"label": "Get a push notification", "value": "push"}]}]}}, "#
        + #""relatesTo": "$.authenticators.value[0]"}"#

    /// Optional enrollment: `select-authenticator-enroll` with `skip` beside it.
    static let optionalEnrollment = select(
        emailOption, name: "select-authenticator-enroll", path: "/idp/idx/credential/enroll",
        also: remediation("skip", path: "/idp/idx/skip", fields: stateField))

    static let enrollProfile = state(
        remediations(remediation("select-enroll-profile", path: "/idp/idx/enroll", fields: stateField), cancel))

    static let success = IDXResponse(
        body: Array(
            (#"{"version": "1.0.0", "intent": "LOGIN", "successWithInteractionCode": {"rel": ["create-form"], "name": "issue", "#
                + #""href": "\#(origin)/oauth2/default/v1/token", "method": "POST", "accepts": "application/x-www-form-urlencoded", "value": ["#
                + #"{"name": "grant_type", "required": true, "value": "interaction_code"}, {"name": "interaction_code", "required": true, "value": "abc"}, "#
                + #"{"name": "client_id", "required": true, "value": "0oa1"}, {"name": "code_verifier", "required": true}]}}"#).utf8))!

    static let topError = IDXResponse(
        body: Array(
            #"{"version": "1.0.0", "messages": {"type": "array", "value": [{"class": "ERROR", "i18n": {"key": "errors.E0000004"}, "message": "Authentication failed"}]}}"#
                .utf8))!
}
