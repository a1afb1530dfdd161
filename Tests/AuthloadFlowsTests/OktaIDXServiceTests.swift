import AuthloadCore
import AuthloadWire
import Testing

@testable import AuthloadStaging

@Suite("Okta IDX staging service: ION shapes and server behaviours")
struct OktaIDXServiceTests {
    /// 2027-01-15T08:00:00Z, as the service's "now".
    static let epoch: Duration = .seconds(1_800_000_000)
    static let verifier = String(repeating: "v", count: 43)

    let service: OktaIDXService

    init() {
        service = Self.service()
    }

    static func service(capacity: Int = 100, _ configure: (inout OktaIDXService.Options) -> Void = { _ in }) -> OktaIDXService {
        var options = OktaIDXService.Options()
        configure(&options)
        return OktaIDXService(options: options, capacity: capacity, now: { epoch })
    }

    func post(_ path: String, json: JSONValue? = nil, form: [(String, String)]? = nil, to service: OktaIDXService? = nil) throws
        -> HTTPResponse
    {
        var request = HTTPRequest(
            method: "POST", target: path, headers: ["Host": "idx.test:8080"],
            body: json?.serialized() ?? form.map(FormURLEncoding.encode) ?? [])
        request.headers.add("Content-Type", json == nil ? IDXMediaType.form : IDXMediaType.json)
        let reply = try #require((service ?? self.service).respond(to: request))
        return try reply.result.get()
    }

    /// interact + introspect: the first ION state and its handle.
    func start(_ service: OktaIDXService? = nil) throws -> (JSONValue, String) {
        let challenge = Base64.urlEncoded(Digest.sha256(Array(Self.verifier.utf8)))
        let interact = try post(
            IDXPaths().interact,
            form: [
                ("client_id", "authload"), ("code_challenge", challenge),
                ("code_challenge_method", "S256")
            ], to: service)
        let handle = try #require(try JSONValue.parse(interact.body)["interaction_handle"]?.stringValue)
        let ion = try JSONValue.parse(try post(IDXPaths.introspect, json: ["interactionHandle": .string(handle)], to: service).body)
        return (ion, try #require(ion["stateHandle"]?.stringValue))
    }

    func names(_ fields: JSONValue?) -> [String] { (fields?.arrayValue ?? []).compactMap { $0["name"]?.stringValue } }

    @Test("interact refuses a request without an S256 code challenge with invalid_request")
    func interactNeedsPKCE() throws {
        let response = try post(
            IDXPaths().interact, form: [("client_id", "authload"), ("code_challenge", "abc"), ("code_challenge_method", "plain")])
        #expect(response.status == 400)
        #expect(try JSONValue.parse(response.body)["error"] == "invalid_request")
    }

    @Test("introspect answers ION with identify, cancel and app, dated by the injected now", arguments: OktaIDXService.Policy.allCases)
    func introspectShape(policy: OktaIDXService.Policy) throws {
        let service = Self.service { $0.policy = policy }
        let (ion, handle) = try start(service)
        #expect(ion["version"] == "1.0.0" && ion["intent"] == "LOGIN")
        #expect(ion["expiresAt"] == "2027-01-15T08:10:00.000Z", "now + the 10-minute state handle lifetime")
        let identify = try #require(ion["remediation"]?["value"]?[0])
        #expect(identify["name"] == "identify")
        #expect(identify["href"] == "http://idx.test:8080/idp/idx/identify", "absolute, at the origin the client addressed")
        #expect(identify["accepts"]?.stringValue == IDXMediaType.json)
        let fields = names(identify["value"])
        #expect(
            fields
                == (policy == .singleForm
                    ? ["identifier", "credentials", "rememberMe", "stateHandle"] : ["identifier", "rememberMe", "stateHandle"]))
        let state = try #require(identify["value"]?.arrayValue?.last)
        #expect(state["value"]?.stringValue == handle && state["visible"] == false && state["mutable"] == false)
        #expect(ion["cancel"]?["href"] == "http://idx.test:8080/idp/idx/cancel")
        #expect(ion["app"]?["value"]?["label"] == "authload")
    }

    @Test("after the password, select-authenticator-authenticate offers each factor: email fixed, phone with SMS as a choice")
    func selectShape() throws {
        let (_, handle) = try start()
        _ = try post(IDXPaths.identify, json: ["identifier": "ana@example.com", "stateHandle": .string(handle)])
        let password = try JSONValue.parse(
            try post(IDXPaths.answer, json: ["credentials": ["passcode": "pw"], "stateHandle": .string(handle)]).body)
        let select = try #require(password["remediation"]?["value"]?[0])
        #expect(select["name"] == "select-authenticator-authenticate")
        let options = try #require(select["value"]?[0]?["options"]?.arrayValue)
        #expect(options.map { $0["label"]?.stringValue } == ["Email", "Phone"])
        let email = options[0]["value"]?["form"]?["value"]
        #expect(email?[1] == ["name": "methodType", "mutable": false, "value": "email"])
        let phone = options[1]["value"]?["form"]?["value"]
        #expect(phone?[1]?["options"]?[0] == ["label": "SMS", "value": "sms"])
        #expect(password["authenticators"]?["value"]?.arrayValue?.count == 2)
        #expect(password["user"]?["value"]?["identifier"] == "ana@example.com")
    }

    @Test("a wrong code repeats the challenge with a field-level PASSCODE_INVALID, and the right one issues a single-use code")
    func passcodes() throws {
        let service = Self.service { $0.policy = .singleForm }
        let (_, handle) = try start(service)
        let state: JSONValue = .string(handle)
        _ = try post(IDXPaths.identify, json: ["identifier": "ana", "credentials": ["passcode": "pw"], "stateHandle": state], to: service)
        let challenge = try JSONValue.parse(
            try post(
                IDXPaths.challenge, json: ["authenticator": ["id": "aut-email", "methodType": "email"], "stateHandle": state], to: service
            ).body)
        #expect(challenge["currentAuthenticatorEnrollment"]?["value"]?["poll"]?["refresh"] == 4000)
        let wrong = try post(IDXPaths.answer, json: ["credentials": ["passcode": "000000"], "stateHandle": state], to: service)
        #expect(wrong.status == 400)
        let parsed = try #require(IDXResponse(body: wrong.body))
        #expect(parsed.errors.map(\.key) == [IDXMessageKey.passcodeInvalid])
        #expect(parsed.firstError?.key == IDXMessageKey.passcodeInvalid)
        #expect(parsed.messages.isEmpty, "the error is on the passcode field, not at the top")
        #expect(parsed.remediations.map(\.name) == ["challenge-authenticator"])

        let right = try #require(
            IDXResponse(
                body: try post(IDXPaths.answer, json: ["credentials": ["passcode": "123456"], "stateHandle": state], to: service).body))
        let success = try #require(right.success)
        #expect(success.accepts == IDXMediaType.form && success.targetPath == "/oauth2/default/v1/token")
        let code = try #require(success.fields.first { $0.name == "interaction_code" }?.value?.stringValue)
        let token = { (verifier: String) in
            try self.post(
                IDXPaths().token,
                form: [
                    ("grant_type", "interaction_code"), ("interaction_code", code),
                    ("client_id", "authload"), ("code_verifier", verifier)
                ], to: service)
        }
        let ok = try token(Self.verifier)
        #expect(ok.status == 200)
        #expect(try JSONValue.parse(ok.body)["expires_in"] == 3600)
        let replay = try token(Self.verifier)
        #expect(replay.status == 400)
        #expect(try JSONValue.parse(replay.body)["error"] == "invalid_grant")
        #expect(service.tableSizes.grants == 0 && service.tableSizes.transactions == 0)
    }

    @Test("a verifier that does not match the challenge fails PKCE verification")
    func pkce() throws {
        let service = Self.service { $0.policy = .singleForm }
        let (_, handle) = try start(service)
        let state: JSONValue = .string(handle)
        _ = try post(IDXPaths.identify, json: ["identifier": "ana", "credentials": ["passcode": "pw"], "stateHandle": state], to: service)
        _ = try post(
            IDXPaths.challenge, json: ["authenticator": ["id": "aut-phone", "methodType": "sms"], "stateHandle": state], to: service)
        let success = try #require(
            IDXResponse(
                body: try post(IDXPaths.answer, json: ["credentials": ["passcode": "123456"], "stateHandle": state], to: service).body)?
                .success)
        let code = try #require(success.fields.first { $0.name == "interaction_code" }?.value?.stringValue)
        let response = try post(
            IDXPaths().token,
            form: [
                ("grant_type", "interaction_code"), ("interaction_code", code),
                ("code_verifier", String(repeating: "w", count: 43))
            ], to: service)
        #expect(response.status == 400)
        #expect(try JSONValue.parse(response.body) == ["error": "invalid_grant", "error_description": "PKCE verification failed."])
    }

    @Test("over budget, a path answers 429 with Okta's headers: limit, 0 remaining, the window's end, and Date")
    func rateLimitHeaders() throws {
        let service = Self.service { $0.rateLimit = .init(limit: 1, window: .seconds(60), paths: [IDXPaths.introspect]) }
        _ = try post(IDXPaths.introspect, json: ["interactionHandle": "x"], to: service)
        let limited = try post(IDXPaths.introspect, json: ["interactionHandle": "x"], to: service)
        #expect(limited.status == 429)
        #expect(limited.headers["X-Rate-Limit-Limit"] == "1" && limited.headers["X-Rate-Limit-Remaining"] == "0")
        #expect(limited.headers["X-Rate-Limit-Reset"] == "1800000060")
        #expect(limited.headers["Date"] == "Fri, 15 Jan 2027 08:00:00 GMT")
        #expect(try JSONValue.parse(limited.body)["errorCode"] == "E0000047")
        #expect(try post(IDXPaths.identify, json: ["stateHandle": "x"], to: service).status == 401, "other paths keep their budget")
    }

    @Test("an expired or unknown state handle answers 401 idx.session.expired with nowhere to go")
    func expiry() throws {
        let response = try post(IDXPaths.identify, json: ["identifier": "ana", "stateHandle": "02unknown"])
        #expect(response.status == 401)
        let ion = try #require(IDXResponse(body: response.body))
        #expect(ion.messages.map(\.key) == [IDXMessageKey.sessionExpired] && ion.remediations.isEmpty && ion.success == nil)
    }

    @Test("a call the state does not allow answers the state again with a top-level ERROR")
    func wrongOrder() throws {
        let (_, handle) = try start()
        let response = try post(IDXPaths.challenge, json: ["authenticator": ["id": "aut-email"], "stateHandle": .string(handle)])
        #expect(response.status == 400)
        let ion = try #require(IDXResponse(body: response.body))
        #expect(ion.messages.map(\.key) == [IDXMessageKey.invalidRequest] && ion.remediations.map(\.name) == ["identify"])
    }

    @Test("interaction handles, state handles and codes stay within the table capacity however many logins start")
    func boundedTables() throws {
        let service = Self.service(capacity: 3)
        for _ in 0..<10 { _ = try start(service) }
        let sizes = service.tableSizes
        #expect(sizes.interactions <= 3 && sizes.transactions <= 3)
    }

    @Test("the rate limiter keeps counts for a bounded number of paths, however many a client invents")
    func boundedRateWindows() throws {
        let service = Self.service { $0.rateLimit = .init(limit: 0, window: .seconds(60)) }
        for index in 0..<200 { _ = try post(IDXPaths.idxPrefix + "/invented/\(index)", json: ["stateHandle": "x"], to: service) }
        #expect(service.rateLimitedPaths == OktaIDXService.rateLimitedPathCapacity)
    }
}
