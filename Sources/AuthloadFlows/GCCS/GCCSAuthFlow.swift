import AuthloadCore
import AuthloadWire

/// GCCS (fnsvalue Guardian) authentication (docs/protocols.md, GCCS): a REST auth request, then a STOMP-over-WebSocket
/// status stream, completion, the result token, or a cancel.
///
/// One iteration: `POST /auth` → channel and block keys; open the socket, STOMP CONNECT and SUBSCRIBE
/// `/user/queue` (with a receipt, so no status can be lost) *before* `POST /auth/nodes`; follow
/// `CreateChannel → SelectNodes → StartVerificationOfNodes → CompleteVerificationOfNodes`; `POST
/// /auth/complete`; `AuthCompleted`; `GET /auth` for the token; UNSUBSCRIBE and DISCONNECT. A share of
/// users (`cancelRatio`) cancels with `DELETE /auth` after `cancelAfter` instead and waits for
/// `AuthCanceled`. Like the SDK, the flow gives up with a local `AuthTimeout` when verification has not
/// completed `authTimeRemaining` after `auth/nodes` answered.
///
/// Outcomes: `rtCode ≠ 0` is a protocol error named by its code (`rtCode 2010`); `AuthFailed` an auth
/// failure; `AuthTimeout` a timeout; a STOMP ERROR a protocol error; a socket closed mid-flow
/// (`websocket closed 1011`) or a refused handshake (`handshake 503`) a transport or HTTP error.
/// Each timed status is recorded from the flow's start and from the previous event ("… gap"). A status
/// that comes again is tolerated, as the SDK tolerates it, and counted (`duplicate status`); so is each
/// verification status that never came before a later one did (`missing status`).
public struct GCCSAuthFlow: Flow {
    public struct Options: Sendable, Equatable {
        public var paths = GCCSPaths()
        public var clientKey = "authload-client"
        public var lang = "en"
        /// Share of iterations that cancel instead of completing.
        public var cancelRatio = 0.0
        /// The status after which a cancelling user sends `DELETE /auth`.
        public var cancelAfter = GCCSStatus.selectNodes
        /// Ask for a RECEIPT of the SUBSCRIBE and wait for it before `auth/nodes` (the SDK does not; without
        /// it a fast server's first status can beat the subscription).
        public var subscribeReceipt = true
        /// STOMP heart-beats to offer; nil sends no header (the SDK's `0,0`).
        public var heartBeat: StompHeartBeat?
        /// `Sec-WebSocket-Protocol` values to offer; none by default, like the SDK.
        public var subprotocols: [String] = []
        /// What completion says of the secondary authentication: as `authType` asks (`auto`), or always one answer.
        public var secondaryCertification = SecondaryCertification.auto

        public init() {}
    }

    /// `isSecondaryCertification` on completion: the app sends `true` after it performed the secondary
    /// authentication that `authType` asked for.
    public enum SecondaryCertification: Sendable, Equatable {
        case auto
        case always(Bool)

        /// The value to send for an `auth/nodes` answer's `authType` (nil when it sent none: nothing was asked).
        func value(for authType: Int?) -> Bool {
            switch self {
            case .auto: authType.map(GCCSAuthType.asksSecondaryCertification) ?? false
            case .always(let value): value
            }
        }
    }

    /// The options and base path, in one object every iteration refers to: a copy in each held iteration took about
    /// 180 bytes.
    private final class Settings: Sendable {
        let options: Options
        let basePath: String

        init(options: Options, basePath: String) {
            self.options = options
            self.basePath = basePath
        }
    }

    private let settings: Settings
    public var options: Options { settings.options }
    var basePath: String { settings.basePath }

    public init(options: Options, basePath: String = "") {
        settings = Settings(options: options, basePath: basePath)
    }

    /// The device id the flow sends for user number `index`.
    static func deviceID(ofUser index: Int) -> String { "authload-device-\(index)" }

    /// The headers of every REST request, made once and shared: each request built its own, two fields at a time.
    static let jsonHeaders: HTTPHeaders = {
        var headers = HTTPHeaders()
        headers.add("Content-Type", "application/json")
        headers.add("Accept", "application/json")
        return headers
    }()

    /// Statuses timed as steps of their own, in stream order.
    static let timedStatuses: [GCCSStatus] = GCCSStatus.verification + [.authCompleted, .authCanceled]

    enum Step: String, CaseIterable {
        case auth, connect, nodes, complete, token, cancel, disconnect
        /// Events: a status that came again, and a verification status that never came before a later one did.
        case duplicateStatus = "duplicate status"
        case missingStatus = "missing status"
    }

    /// The report's steps in the order a user meets them, each status with its gap.
    static let stepNames: [String] = {
        func timed(_ status: GCCSStatus) -> [String] { [status.rawValue, status.rawValue + " gap"] }
        return [Step.auth.rawValue, Step.connect.rawValue, Step.nodes.rawValue]
            + GCCSStatus.verification.flatMap(timed)
            + [Step.complete.rawValue] + timed(.authCompleted) + [Step.token.rawValue]
            + [Step.cancel.rawValue] + timed(.authCanceled) + [Step.disconnect.rawValue]
            + [Step.duplicateStatus.rawValue, Step.missingStatus.rawValue]
    }()

    public var stepNames: [String] { Self.stepNames }

    /// The statuses and their gaps, and the duplicate and missing statuses: pushed by the server (or not), not requested.
    public var eventSteps: Set<String> {
        Set(
            Self.timedStatuses.flatMap { [$0.rawValue, $0.rawValue + " gap"] } + [
                Step.duplicateStatus.rawValue, Step.missingStatus.rawValue
            ])
    }

    /// Looked up among the steps rather than among the names: the flow records a step at every request and status.
    static func index(_ step: Step) -> Int { stepIndices[steps.firstIndex(of: step)!] }

    /// The step numbers of a timed status: from the flow's start, and its gap.
    static func indices(of status: GCCSStatus) -> (sinceStart: Int, gap: Int)? {
        guard let position = timedStatuses.firstIndex(of: status) else { return nil }
        let index = timedStatusIndices[position]
        return (index, index + 1)
    }

    private static let steps = Step.allCases
    private static let stepIndices = steps.map { stepNames.firstIndex(of: $0.rawValue)! }
    private static let timedStatusIndices = timedStatuses.map { stepNames.firstIndex(of: $0.rawValue)! }

    // Specialized for a simulation's clock only: there a flow's turns cost CPU and nothing else, while a real run's
    // flows stay generic for the memory of users waiting in them (Runner.run(), docs/development.md).
    @_specialize(where C == SimulationClock)
    public func run<C: Clock>(_ context: FlowContext<C>, user: isolated VirtualUser) async -> Outcome where C.Duration == Duration {
        await iteration(context, user: user).run()
    }

    /// Hands each wait on the status stream to the engine, when the socket can follow the stream on its own loop: a user
    /// holds it about a minute, and a task waiting that long keeps the memory of every frame it stacked before.
    @_specialize(where C == SimulationClock)
    public func start<C: Clock>(_ context: FlowContext<C>, user: isolated VirtualUser) async -> FlowProgress where C.Duration == Duration {
        await iteration(context, user: user).start()
    }

    /// The iteration ``run(_:user:)`` runs; made apart, so that the run's async frame (which the user's task keeps
    /// for the minute a status stream is held) holds only the iteration.
    @inline(never)
    private func iteration<C: Clock>(_ context: FlowContext<C>, user: isolated VirtualUser) -> sending GCCSIteration<C> {
        let cancels = options.cancelRatio > 0 && Double.random(in: 0..<1, using: &user.random) < options.cancelRatio
        return GCCSIteration(
            flow: self, context: context, userKey: user.identity.username, userIndex: user.index, cancels: cancels)
    }

    /// How a REST answer counts: the envelope's `rtCode` decides, whatever the HTTP status (as in the SDK);
    /// a body that is not an envelope is an HTTP error, or a protocol error on a 200.
    static func classify(_ response: HTTPResponse) -> Outcome { classify(response, envelope: GCCSEnvelope(body: response.body)) }

    /// ``classify(_:)`` of a response whose body was parsed already (`envelope`, nil when it is not one).
    static func classify(_ response: HTTPResponse, envelope: GCCSEnvelope?) -> Outcome {
        guard let envelope else {
            return response.status == 200 ? Outcome(.protocolError, "not a GCCS envelope") : Outcome(.httpError, "\(response.status)")
        }
        return envelope.rtCode == GCCSResultCode.success ? .ok : Outcome(.protocolError, "rtCode \(envelope.rtCode)")
    }
}
