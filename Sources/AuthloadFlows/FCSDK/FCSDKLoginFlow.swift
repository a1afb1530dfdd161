import AuthloadCore

/// FCSDK login (docs/protocols.md, FCSDK): log in with JSON credentials, hold the session, log out.
///
/// Outcomes: 401 is an auth failure; 200 without a `sessionid` is a protocol error (the SDK samples
/// treat it as failure too); any other non-200 is an HTTP error; no response is a timeout or a
/// transport error. Logout of an unknown session (404) is an HTTP error on the logout step.
public struct FCSDKLoginFlow: Flow {
    public enum Step: Int, CaseIterable {
        case login, logout
    }

    public struct Options: Sendable, Equatable {
        /// Prefixed with the target's base path.
        public var loginPath = "/csdk-sample/SDK/login"
        /// Where the session is ended, `{sessionid}` standing for it; nil is `{loginPath}/id/{sessionid}`. Ours: the
        /// app's web server decides it (docs/protocols.md, FCSDK).
        public var logoutPath: String?
        /// Clear the user's cookies before each login (the SDK samples do), or keep them (`useCookies`).
        public var clearCookies = true
        /// Time between login and logout: the user using the app.
        public var hold = ThinkTime()

        public init() {}
    }

    public let options: Options
    private let basePath: String
    /// Where logins go, the base path prefixed once rather than for every login.
    private let loginTarget: String
    /// Where logouts go when `logoutPath` is nil: the login's target and `/id/`, then the session id.
    private let defaultLogoutPrefix: String
    public var stepNames: [String] { Step.allCases.map { "\($0)" } }

    public init(options: Options, basePath: String = "") {
        self.options = options
        self.basePath = basePath
        loginTarget = basePath + options.loginPath
        defaultLogoutPrefix = loginTarget + "/id/"
    }

    // Specialized for a simulation's clock only: there a flow's turns cost CPU and nothing else, while a real run's
    // flows stay generic for the memory of users waiting in them (Runner.run(), docs/development.md).
    @_specialize(where C == SimulationClock)
    public func run<C: Clock>(_ context: FlowContext<C>, user: isolated VirtualUser) async -> Outcome where C.Duration == Duration {
        await logInAndOut(context, user: user)
    }

    /// The engine's entry: the flow's body inlined here rather than awaited through the default `start`, which ran
    /// generic and cost each flow an async call level (two executor checks, each taking the task's status lock).
    @_specialize(where C == SimulationClock)
    public func start<C: Clock>(_ context: FlowContext<C>, user: isolated VirtualUser) async -> FlowProgress
    where C.Duration == Duration {
        .ended(await logInAndOut(context, user: user))
    }

    @inline(__always)
    private func logInAndOut<C: Clock>(_ context: FlowContext<C>, user: isolated VirtualUser) async -> Outcome
    where C.Duration == Duration {
        if options.clearCookies { user.cookies.removeAll() }
        let identity = user.identity
        var login = HTTPRequest(
            method: "POST", target: loginTarget, headers: Self.loginHeaders,
            body: Self.credentials(username: identity.username, password: identity.password))
        if let cookie = user.cookies.header { login.headers.add("Cookie", cookie) }

        // The body is read once, by the classification, which keeps the session id it found.
        var found: String?
        let loggedIn = await context.exchange(step: Step.login.rawValue, login) { Self.classifyLogin($0, sessionID: &found) }
        if let headers = loggedIn.response?.headers { user.cookies.store(from: headers) }
        guard loggedIn.outcome.isOK, let sessionID = found else { return loggedIn.outcome }
        user.sessionID = sessionID

        let hold = user.random.duration(in: options.hold)
        if hold > .zero {
            let paused = await context.pause(for: hold)
            guard paused.isOK else { return paused }
        }

        let logoutTarget =
            options.logoutPath.map { basePath + $0.filling("{sessionid}", with: sessionID) } ?? defaultLogoutPrefix + sessionID
        var logout = HTTPRequest(method: "DELETE", target: logoutTarget, headers: Self.logoutHeaders)
        if let cookie = user.cookies.header { logout.headers.add("Cookie", cookie) }
        let loggedOut = await context.exchange(step: Step.logout.rawValue, logout) { response in
            response.status == 200 ? .ok : Outcome(.httpError, "\(response.status)")
        }
        if let headers = loggedOut.response?.headers { user.cookies.store(from: headers) }
        user.sessionID = nil
        return loggedOut.outcome
    }

    // Made once and shared, copied only when a request adds its cookie: each request built its own, field by field.
    static let loginHeaders: HTTPHeaders = ["Content-Type": "application/json", "Accept": "application/json"]
    static let logoutHeaders: HTTPHeaders = ["Content-Type": "application/json"]

    /// The login's body, `{"username","password"}`, written as bytes: byte for byte what serializing the object writes
    /// (each value through the same writer), without building it for every login.
    static func credentials(username: String, password: String) -> [UInt8] {
        var body = JSONObjectWriter(reservingCapacity: 32 + username.utf8.count + password.utf8.count)
        body.add("username", username)
        body.add("password", password)
        return body.finish()
    }

    /// The login's outcome; sets `found` to the session id of a 200's body.
    static func classifyLogin(_ response: HTTPResponse, sessionID found: inout String?) -> Outcome {
        switch response.status {
        case 200:
            found = sessionID(in: response)
            return found == nil ? Outcome(.protocolError, "200 without sessionid") : .ok
        case 401: return Outcome(.authFailure, "401")
        default: return Outcome(.httpError, "\(response.status)")
        }
    }

    static func sessionID(in response: HTTPResponse) -> String? {
        guard let sessionID = response.jsonString("sessionid"), !sessionID.isEmpty else { return nil }
        return sessionID
    }
}
