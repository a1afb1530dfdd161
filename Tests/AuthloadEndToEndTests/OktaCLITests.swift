import AuthloadCLI
import AuthloadCore
import Foundation
import Testing

@Suite("Okta IDX profile options on the command line")
struct OktaCLITests {
    @Test(
        "validate names a bad Okta flow or staging option in one line and exits 64",
        arguments: [
            (
                #"{"name": "m", "kind": "okta-idx-mfa", "factor": "fax"}"#, "{}",
                #"flows[0].factor: "fax" is not one of: email, sms, voice, totp, push, security_question"#
            ),
            (
                #"{"name": "m", "kind": "okta-idx-mfa", "issuerPath": "oauth2/default"}"#, "{}",
                #"flows[0].issuerPath: must be empty or start with '/' and not end with one, e.g. "/oauth2/default""#
            ),
            (
                #"{"name": "m", "kind": "okta-idx-mfa", "maxRestarts": -1}"#, "{}",
                "flows[0].maxRestarts: must be a whole number from 0 to 10, found -1"
            ),
            (
                #"{"name": "m", "kind": "okta-idx-mfa", "restartOnExpiry": "yes"}"#, "{}",
                "flows[0].restartOnExpiry: expected true or false, found a string"
            ),
            (
                #"{"name": "m", "kind": "okta-idx-mfa", "passcode": ""}"#, "{}",
                "flows[0].passcode: must not be empty"
            ),
            (
                #"{"name": "m", "kind": "okta-idx-mfa", "factors": ["email", "sms", "email"]}"#, "{}",
                "flows[0].factors: must not name a factor twice"
            ),
            (
                #"{"name": "m", "kind": "okta-idx-mfa", "factors": []}"#, "{}",
                "flows[0].factors: must name at least one of: email, sms, voice, totp, push, security_question"
            ),
            (
                #"{"name": "m", "kind": "okta-idx-mfa", "factor": "sms", "factors": ["email"]}"#, "{}",
                "flows[0].factors: give either factor or factors, not both"
            ),
            (
                #"{"name": "m", "kind": "okta-idx-mfa"}"#, #"{"okta": {"policy": "two-form"}}"#,
                #"target.embedded.okta.policy: "two-form" is not one of: identifier-first, single-form, select-first, factor-first, security-question"#
            ),
            (
                #"{"name": "m", "kind": "okta-idx-mfa"}"#, #"{"okta": {"factors": ["email", "push"]}}"#,
                #"target.embedded.okta.factors[1]: "push" is not one of: email, sms, voice"#
            ),
            (
                #"{"name": "m", "kind": "okta-idx-mfa"}"#, #"{"okta": {"wrongPasscodeRate": 2}}"#,
                "target.embedded.okta.wrongPasscodeRate: must be between 0 and 1, found 2.0"
            ),
            (
                #"{"name": "m", "kind": "okta-idx-mfa"}"#, #"{"okta": {"rateLimit": {"window": "60s"}}}"#,
                "target.embedded.okta.rateLimit.limit: is required"
            ),
            (
                #"{"name": "m", "kind": "okta-idx-mfa"}"#, #"{"okta": {"rateLimit": {"limit": 5, "window": "1500ms"}}}"#,
                "target.embedded.okta.rateLimit.window: must be whole seconds (X-Rate-Limit-Reset is in seconds)"
            ),
            (
                #"{"name": "m", "kind": "okta-idx-mfa"}"#, #"{"okta": {"stateHandleLifetime": "0s"}}"#,
                "target.embedded.okta.stateHandleLifetime: must be longer than 0s"
            )
        ])
    func badOption(flow: String, embedded: String, expected: String) async throws {
        let (code, err) = try await validate(flow: flow, embedded: embedded)
        #expect(code == .usage)
        #expect(err == "error: bad.json: \(expected)\n")
    }
}
