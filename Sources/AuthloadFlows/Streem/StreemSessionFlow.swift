import AuthloadCore
import AuthloadWire

/// A Streem session (docs/protocols.md, Streem): log in to a Streem token, hold the session making authorized calls
/// at a pace, keep the token fresh, log out.
///
/// Login is by invitation code (the user's `invitationCode`, 9 digits) or by OpenID: the company's
/// configuration, the test-only password grant, and the exchange of the access token for a Streem token.
/// While the session is held the user calls `callPath` every `callInterval` (on an absolute schedule).
/// The token is refreshed either *proactively*, `refreshLead` plus a random share of `refreshJitter`
/// before its `exp` (jitter spreads a crowd whose tokens expire together), or *reactively*, when a call
/// is answered 401 — then the call is made again. Each user refreshes one at a time (the flow is
/// sequential per user: single-flight by construction). Once `session_exp` is near, a refresh cannot
/// help and the user logs in again (`relogin`); so does a refresh the server refuses (`invalid_grant`). Token lifetimes are read from the token's own claims
/// (`exp − iat`), so the client's and server's clocks need not agree.
///
/// Steps: the login steps; `call`; `refresh` (the whole refresh, one or two requests); `logout`; and three
/// events: `expired` (a call answered 401 that led to a reactive refresh), `relogin` (the session's end was
/// near, or the server refused a refresh) and `session-ended` (the target has no refresh endpoint, so the
/// session ended with its token).
public struct StreemSessionFlow: Flow {
    public enum Login: String, Sendable, CaseIterable {
        case invitation, openid
    }

    public enum Refresh: String, Sendable, CaseIterable {
        case proactive, reactive
    }

    public struct Options: Sendable, Equatable {
        public var login = Login.invitation
        /// The company; nil takes the user's `companyCode` column when it has one, else `acme`.
        public var companyCode: String?
        /// How long the session is held.
        public var hold = ThinkTime.fixed(.seconds(600))
        public var callInterval: Duration = .seconds(10)
        public var callPath = "/v1/me"
        public var refresh = Refresh.proactive
        public var refreshLead: Duration = .seconds(10)
        public var refreshJitter: Duration = .seconds(5)
        /// Invitation sessions only: where the token is renewed. The contract leaves this to the app's own
        /// server; the embedded server serves this default. A target that answers 404 or 405 here has no
        /// refresh: the session then ends when its token expires (`session-ended`), which is not a failure.
        public var refreshPath = "/v1/streem-tokens/refresh"
        public var logout = true
        /// The contract's other paths, authload's own (StreemKit's are not public; docs/protocols.md, Streem), so a
        /// stack with other names can be tested unchanged. `{code}` and `{company}` stand for the user's
        /// invitation code and the company code, percent-encoded.
        public var redeemPath = "/v1/invitations/{code}/redeem"
        public var configurationPath = "/v1/companies/{company}/openid-configuration"
        public var exchangePath = "/v1/streem-tokens"
        public var logoutPath = "/v1/sessions/logout"

        public init() {}
    }

    public let options: Options
    let basePath: String
    /// How many users are refreshing right now, and the most there ever were.
    public let refreshes = ConcurrencyGauge()

    /// The targets of the calls a held session makes again and again, the base path prefixed once.
    let callTarget: String
    let logoutTarget: String
    let refreshTarget: String
    /// The steps of this login, in the order they are reported.
    let steps: [Step]

    public init(options: Options, basePath: String = "") {
        self.options = options
        self.basePath = basePath
        callTarget = basePath + options.callPath
        logoutTarget = basePath + options.logoutPath
        refreshTarget = basePath + options.refreshPath
        let login: [Step] = options.login == .invitation ? [.redeem] : [.openIDConfiguration, .token, .exchange]
        steps = login + [.call, .refresh, .logout, .expired, .relogin, .sessionEnded]
    }

    enum Step: String {
        case redeem
        case openIDConfiguration = "openid-configuration"
        case token, exchange, call, refresh, logout, expired, relogin
        case sessionEnded = "session-ended"
    }

    public var stepNames: [String] { steps.map(\.rawValue) }
    public var eventSteps: Set<String> { Set([Step.expired, .relogin, .sessionEnded].map(\.rawValue)) }
    public var userFields: Set<String> { options.login == .invitation ? ["invitationCode"] : [] }
    /// An invitation is single-use: a server answers 410 to a second redemption of its code.
    public var singleUseFields: Set<String> { userFields }
    public var gauges: [String: ConcurrencyGauge] { ["concurrent refreshes": refreshes] }

    func index(_ step: Step) -> Int { steps.firstIndex(of: step)! }

    // Specialized for a simulation's clock only: there a flow's turns cost CPU and nothing else, while a real run's
    // flows stay generic for the memory of users waiting in them (Runner.run(), docs/development.md).
    @_specialize(where C == SimulationClock)
    public func run<C: Clock>(_ context: FlowContext<C>, user: isolated VirtualUser) async -> Outcome where C.Duration == Duration {
        await hold(context, user: user)
    }

    /// The engine's entry: the session inlined here rather than awaited through the default `start`, which ran generic
    /// and cost each flow an async call level (two executor checks, each taking the task's status lock).
    @_specialize(where C == SimulationClock)
    public func start<C: Clock>(_ context: FlowContext<C>, user: isolated VirtualUser) async -> FlowProgress
    where C.Duration == Duration {
        .ended(await hold(context, user: user))
    }

    @inline(__always)
    private func hold<C: Clock>(_ context: FlowContext<C>, user: isolated VirtualUser) async -> Outcome where C.Duration == Duration {
        var session = StreemSession(flow: self, context: context, identity: user.identity)
        // The session draws from the user's generator across suspensions, so it works on a copy and hands it back.
        var random = user.random
        let hold = random.duration(in: options.hold)
        let outcome = await session.run(hold: hold, random: &random)
        user.random = random
        return outcome
    }
}
