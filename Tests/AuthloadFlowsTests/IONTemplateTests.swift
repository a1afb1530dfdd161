import AuthloadCore
import AuthloadWire
import Testing

@testable import AuthloadStaging

/// The Okta IDX service answers from a template per shape of ION: its bytes must be the serialization of the tree.
@Suite("ION templates")
struct IONTemplateTests {
    static let phases: [OktaIDXTransaction.Phase] = [
        .identify, .password, .select, .verificationData, .question, .code(method: "email", enrolling: false),
        .code(method: "sms", enrolling: true), .code(method: "voice", enrolling: false)
    ]
    /// Names that need escaping, and one that holds a template's own marker.
    static let usernames = ["", "alice@example.com", "quote\" back\\slash\n tab\t ünï 🙂", "\u{1}h\u{1}o \u{1}"]

    @Test(
        "every shape's answer is byte for byte the serialization of its tree, whatever the values in its holes",
        arguments: OktaIDXService.Policy.allCases, [false, true])
    func templateEqualsTree(policy: OktaIDXService.Policy, enrolling: Bool) {
        let service = OktaIDXService(options: Self.options(policy, enrolling: enrolling), now: { .seconds(1_800_000_000) })
        let messages: [(IDXMessage?, IDXMessage?)] = [
            (nil, nil), (OktaIDXService.passcodeInvalid, nil), (nil, OktaIDXService.rateLimitMessage)
        ]
        for phase in Self.phases {
            for passwordDone in [false, true] {
                for (passcodeError, topError) in messages {
                    for (index, username) in Self.usernames.enumerated() {
                        var transaction = OktaIDXTransaction(codeChallenge: "c", expiresAt: .milliseconds(1_800_000_600_123 + index))
                        transaction.phase = phase
                        transaction.passwordDone = passwordDone
                        transaction.username = username
                        let handle = "02" + String(repeating: "ab", count: 20) + "\(index)"
                        let origin = index == 3 ? "http://idx.test:8080/\"\u{1}e" : "http://idx.test:8080"
                        let answer = service.ion(
                            transaction, handle: handle, origin: origin, status: topError == nil ? 200 : 429, passcodeError: passcodeError,
                            topError: topError)
                        let tree = service.ionTree(
                            transaction, handle: handle, origin: origin, expires: OktaIDXService.iso8601(transaction.expiresAt),
                            passcodeError: passcodeError, topError: topError)
                        #expect(answer.body == tree.serialized(), "\(policy) \(phase) passwordDone \(passwordDone) user \(index)")
                        #expect(answer.status == (topError == nil ? 200 : 429))
                    }
                }
            }
        }
        let success = service.success(
            OktaIDXTransaction(username: Self.usernames[2], codeChallenge: "c", expiresAt: .zero), code: "code\"1", origin: "http://o")
        #expect(success.body == service.successTree(username: Self.usernames[2], code: "code\"1", origin: "http://o").serialized())
    }

    @Test("interact and token answers are byte for byte the serialization of their trees, whatever the values")
    func oauthAnswersEqualTrees() throws {
        let interact = IONTemplate(serializing: OktaIDXService.interactTree(handle: IONTemplate.marker(.handle)))
        let token = IONTemplate(
            serializing: OktaIDXService.tokenTree(
                lifetime: .seconds(3_600), access: IONTemplate.marker(.accessToken), refresh: IONTemplate.marker(.refreshToken),
                id: IONTemplate.marker(.idToken)))
        for (index, value) in (Self.usernames + ["0123456789abcdef"]).enumerated() {
            let (access, refresh, id) = (value + "a", "r\(index)" + value, value + value)
            #expect(interact.filled(IONTemplate.Values(handle: value)) == OktaIDXService.interactTree(handle: value).serialized())
            #expect(
                token.filled(IONTemplate.Values(accessToken: access, refreshToken: refresh, idToken: id))
                    == OktaIDXService.tokenTree(lifetime: .seconds(3_600), access: access, refresh: refresh, id: id).serialized())
        }
        // The service answers interact from its template, as JSON.
        let service = OktaIDXService(options: OktaIDXService.Options(), now: { .seconds(1_800_000_000) })
        var request = HTTPRequest(
            method: "POST", target: IDXPaths().interact,
            body: FormURLEncoding.encode([("client_id", "authload"), ("code_challenge", "c"), ("code_challenge_method", "S256")]))
        request.headers.add("Content-Type", IDXMediaType.form)
        let answer = try #require(service.respond(to: request)).result.get()
        let handle = try #require(try JSONValue.parse(answer.body)["interaction_handle"]?.stringValue)
        #expect(answer.body == OktaIDXService.interactTree(handle: handle).serialized())
        #expect(answer.headers["Content-Type"] == "application/json")
    }

    @Test("an expiry written from its second's cached text is the ISO 8601 text of the instant, across seconds and the epoch")
    func expiryText() {
        let service = OktaIDXService(options: Self.options(.identifierFirst, enrolling: false))
        let instants: [Int64] = [0, 1, 999, 1000, 1001, -1, -999, -1000, -1001, 1_800_000_600_042, 1_800_000_600_999, 1_800_000_601_000]
        // In turn, so that each second's text is both made and reused, and a second comes back after another.
        for milliseconds in instants + instants.reversed() + (0..<2_500).map({ 1_800_000_599_000 + Int64($0 * 7) }) {
            let time = Duration.milliseconds(milliseconds) + .microseconds(milliseconds % 2 == 0 ? 0 : 456)
            #expect(service.expiryText(time) == OktaIDXService.iso8601(time), "\(milliseconds)")
        }
    }

    static func options(_ policy: OktaIDXService.Policy, enrolling: Bool) -> OktaIDXService.Options {
        var options = OktaIDXService.Options()
        options.policy = policy
        options.factors = ["email", "sms", "voice"]
        options.requireEnrollment = enrolling
        return options
    }
}
