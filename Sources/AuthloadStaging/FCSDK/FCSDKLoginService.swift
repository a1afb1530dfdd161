import AuthloadCore

/// The server side of FCSDK login (docs/protocols.md, FCSDK): the sample web app's login and logout endpoints.
///
/// `POST /csdk-sample/SDK/login` with `{"username", "password"}` answers `{"sessionid", "voiceUser",
/// "voiceDomain"}`, or 401 for a wrong password; `DELETE /csdk-sample/SDK/login/id/{sessionid}` ends the
/// session, or answers 404 for an unknown one. Latency, a 5xx error rate and a `Set-Cookie` are options.
public final class FCSDKLoginService: Sendable {
    public struct Options: Sendable, Equatable {
        public var loginPath = "/csdk-sample/SDK/login"
        public var latency = LatencyModel.none
        /// Fraction of requests answered with `errorStatus` instead (a failing gateway).
        public var errorRate = 0.0
        public var errorStatus = 503
        /// The password every user must send; anything else gets 401.
        public var password = "demo-password"
        public var voiceDomain = "sip.example.com"
        /// Name of a cookie set on login (e.g. `JSESSIONID`, a load balancer's), or nil for none.
        public var setCookie: String?

        public init() {}
    }

    public let options: Options
    private let sessions = Locked<Set<String>>([])
    private let random: Locked<SplitMix64>
    /// Where logouts go: `{loginPath}/id/`, then the session id.
    private let logoutPrefix: String
    /// The answer to a request drawn to fail (`errorRate`), made once.
    private let gatewayUnavailable: HTTPResponse
    /// Bounds the session table: users that never log out must not grow it without end.
    static let sessionCapacity = 1_000_000

    public init(options: Options, seed: UInt64 = 7) {
        self.options = options
        self.random = Locked(SplitMix64(seed: seed))
        logoutPrefix = options.loginPath + "/id/"
        gatewayUnavailable = .json(status: options.errorStatus, ["error": "gateway unavailable"])
    }

    public var activeSessions: Int { sessions.withLock { $0.count } }

    /// Answers the request if it is for this service, nil otherwise.
    ///
    /// - Parameter path: the request's path, which the server has found already.
    func respond(to request: HTTPRequest, path: Substring) -> ServiceReply? {
        // Every request the server answers asks this service first: the prefix is built once, and compared by length
        // first, then as a string of the same length (the generic `hasPrefix` walked it element by element).
        let isLogin = path == options.loginPath
        guard isLogin || path.startsWith(logoutPrefix) else { return nil }
        let (latency, fail, token) = random.withLock { random in
            (
                options.latency.sample(using: &random), Double.random(in: 0..<1, using: &random) < options.errorRate,
                (random.next(), random.next())
            )
        }
        let response: HTTPResponse
        if fail {
            response = gatewayUnavailable
        } else if isLogin {
            guard request.method == "POST" else { return ServiceReply(.methodNotAllowed("POST"), after: latency) }
            response = login(request, token: token)
        } else {
            guard request.method == "DELETE" else { return ServiceReply(.methodNotAllowed("DELETE"), after: latency) }
            response = logout(sessionID: String(path.dropFirst(logoutPrefix.count)))
        }
        return ServiceReply(response, after: latency)
    }

    private func login(_ request: HTTPRequest, token: (UInt64, UInt64)) -> HTTPResponse {
        guard let (username, password) = Self.credentials(in: request.body) else { return Self.badCredentials }
        guard password == options.password else { return Self.invalidCredentials }
        let sessionID = Self.sessionID(token)
        sessions.withLock { sessions in
            if sessions.count >= Self.sessionCapacity { sessions.removeAll() }
            sessions.insert(sessionID)
        }
        var response = HTTPResponse(
            status: 200, headers: HTTPResponse.jsonHeaders,
            body: Self.loginBody(sessionID: sessionID, voiceUser: username, voiceDomain: options.voiceDomain))
        if let cookie = options.setCookie {
            response.headers.add("Set-Cookie", "\(cookie)=\(String(token.1, radix: 36)); Path=/; HttpOnly")
        }
        return response
    }

    /// The `username` and `password` strings of a login's JSON body; nil when the body is not a JSON object with both.
    ///
    /// Read with ``JSONReader``, which checks the whole body as ``JSONValue/parse(_:)`` does but builds no tree.
    static func credentials(in body: [UInt8]) -> (username: String, password: String)? {
        var username: String?
        var password: String?
        do {
            try JSONReader.read(body) { reader throws(JSONParseError) in
                try reader.readMembers { reader, key throws(JSONParseError) in
                    switch key {
                    case "username": username = try reader.string()
                    case "password": password = try reader.string()
                    default: break
                    }
                }
            }
        } catch {
            return nil
        }
        guard let username, let password else { return nil }
        return (username, password)
    }

    // The answers that never change, serialized once rather than for every request.
    static let badCredentials = HTTPResponse.json(status: 400, ["error": "expected a JSON body with username and password"])
    static let invalidCredentials = HTTPResponse.json(status: 401, ["error": "invalid credentials"])
    static let loggedOut = HTTPResponse.json(status: 200, ["response": "logged out"])
    static let unknownSession = HTTPResponse.json(status: 404, ["error": "unknown session"])

    /// The session id of a login: both numbers in lowercase hex without padding, one after the other, as
    /// `String(token.0, radix: 16) + String(token.1, radix: 16)` writes them, written straight into one string.
    static func sessionID(_ token: (UInt64, UInt64)) -> String {
        String(unsafeUninitializedCapacity: 32) { buffer in
            var count = 0
            func append(_ value: UInt64) {
                let digits = max(1, (64 - value.leadingZeroBitCount + 3) / 4)
                for digit in (0..<digits).reversed() {
                    let nibble = UInt8(truncatingIfNeeded: value >> (4 * UInt64(digit))) & 0xF
                    buffer[count] = nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") + nibble - 10
                    count += 1
                }
            }
            append(token.0)
            append(token.1)
            return count
        }
    }

    /// The body of a login's answer, `{"sessionid","voiceUser","voiceDomain"}`, written as bytes: byte for byte what
    /// serializing the object writes (each value through the same writer), without building it for every login.
    static func loginBody(sessionID: String, voiceUser: String, voiceDomain: String) -> [UInt8] {
        var body = JSONObjectWriter(reservingCapacity: 64 + sessionID.utf8.count + voiceUser.utf8.count + voiceDomain.utf8.count)
        body.add("sessionid", sessionID)
        body.add("voiceUser", voiceUser)
        body.add("voiceDomain", voiceDomain)
        return body.finish()
    }

    private func logout(sessionID: String) -> HTTPResponse {
        let removed = sessions.withLock { $0.remove(sessionID) != nil }
        return removed ? Self.loggedOut : Self.unknownSession
    }
}

extension HTTPResponse {
    /// A response with a JSON body and its content type.
    public static func json(status: Int, _ body: JSONValue) -> HTTPResponse {
        HTTPResponse(status: status, headers: jsonHeaders, body: body.serialized())
    }

    /// Made once and shared (a value whose storage is copied only when a response adds a field): every answer of the
    /// staging services built its own from a literal, two allocations each.
    static let jsonHeaders: HTTPHeaders = ["Content-Type": "application/json"]

    static func methodNotAllowed(_ allowed: String) -> HTTPResponse {
        var response = HTTPResponse.json(status: 405, ["error": .string("use \(allowed)")])
        response.headers.add("Allow", allowed)
        return response
    }
}
