import AuthloadCore

// The GCCS (fnsvalue Guardian) vocabulary of docs/protocols.md, GCCS, shared by the flow and the staging service
// so the two cannot drift apart.

/// A status pushed on the `/user/queue` subscription as `{"status": "<name>"}` (docs/protocols.md, GCCS).
public enum GCCSStatus: String, Sendable, Hashable, CaseIterable {
    case requestAuth = "RequestAuth"
    case createChannel = "CreateChannel"
    case selectNodes = "SelectNodes"
    case startAuth = "StartAuth"
    case startVerificationOfNodes = "StartVerificationOfNodes"
    case completeVerificationOfNodes = "CompleteVerificationOfNodes"
    case requestCancel = "RequestCancel"
    case authCanceled = "AuthCanceled"
    case authFailed = "AuthFailed"
    case authCompleted = "AuthCompleted"
    case authTimeout = "AuthTimeout"

    /// The verification stream, in the documented order.
    public static let verification: [GCCSStatus] = [.createChannel, .selectNodes, .startVerificationOfNodes, .completeVerificationOfNodes]

    /// The body of the STOMP MESSAGE that carries this status.
    public var messageBody: [UInt8] { Self.messageBodies[ordinal] }

    /// Reads a status message body; nil when it is not `{"status": "<known name>"}`.
    ///
    /// A body byte for byte as ``messageBody`` writes it (every one the staging service sends) is known without
    /// parsing; any other spelling of the same JSON is parsed.
    public init?(messageBody: [UInt8]) {
        if let index = Self.messageBodies.firstIndex(where: { $0.count == messageBody.count && $0 == messageBody }) {
            self = Self.all[index]
            return
        }
        self.init(parsing: messageBody)
    }

    /// Reads a status message body by parsing it as JSON.
    init?(parsing messageBody: [UInt8]) {
        guard let name = (try? JSONValue.parse(messageBody))?["status"]?.stringValue else { return nil }
        self.init(rawValue: name)
    }

    /// Every status, kept: `allCases` builds its array at every use.
    private static let all = allCases

    /// Each status's body, serialized once, in the order of ``all``.
    private static let messageBodies: [[UInt8]] = all.map { JSONValue.object(["status": .string($0.rawValue)]).serialized() }

    /// The status's place in ``all``.
    private var ordinal: Int { Self.all.firstIndex(of: self)! }
}

/// Result codes of the GCCS envelope (docs/protocols.md, GCCS); 0 is success.
public enum GCCSResultCode {
    public static let success = 0
    public static let invalidClientKey = 2000
    public static let requestParameterError = 2002
    public static let channelDoesNotExist = 2004
    public static let authenticationInProgress = 2010
    public static let authenticationTimeout = 5001
    public static let authenticationFailure = 5010
    public static let authenticationCanceled = 5011
    public static let noAuthenticationInProgress = 5019
    /// The server could not decrypt an `enCode*` field to the value it stands for.
    public static let dataDecryptFailure = 5020
    public static let nodeVerificationFailure = 5022
}

/// The `authType` that `auth/nodes` answers: which authentication the app performs on the device after the nodes
/// verify, before it completes (docs/protocols.md, GCCS).
public enum GCCSAuthType {
    /// Ours: the node verification alone: the app completes with `isSecondaryCertification: false`. Every other value
    /// asks the app for its secondary authentication (biometrics, a PIN) and `true`; the real codes are not public.
    public static let nodesOnly = 1
    /// Ours: the value the staging service sends when it asks for a secondary authentication.
    public static let secondary = 2

    /// Whether the app must perform (and report) a secondary authentication for `authType`.
    public static func asksSecondaryCertification(_ authType: Int) -> Bool { authType != nodesOnly }
}

/// The `{"rtCode", "rtMsg", "data"}` envelope every GCCS REST call answers with.
public struct GCCSEnvelope: Sendable, Equatable {
    public var rtCode: Int
    public var rtMsg: String
    public var data: JSONValue

    public init(rtCode: Int, rtMsg: String = "", data: JSONValue = .null) {
        self.rtCode = rtCode
        self.rtMsg = rtMsg
        self.data = data
    }

    /// Parses a body; nil when it is not JSON with an integer `rtCode` (the SDK maps that to 10001).
    public init?(body: [UInt8]) {
        guard let json = try? JSONValue.parse(body), let code = json["rtCode"]?.intValue else { return nil }
        self.init(rtCode: code, rtMsg: json["rtMsg"]?.stringValue ?? "", data: json["data"] ?? .null)
    }

    public var json: JSONValue { ["rtCode": .number(Double(rtCode)), "rtMsg": .string(rtMsg), "data": data] }

    /// ``json`` serialized, byte for byte, written without building the object: a staging service answers every GCCS
    /// call with one.
    public func serialized() -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(64 + rtMsg.utf8.count)
        output.append(contentsOf: #"{"rtCode":"#.utf8)
        JSONValue.number(Double(rtCode)).write(to: &output)
        output.append(contentsOf: #","rtMsg":""#.utf8)
        JSONValue.appendEscaped(rtMsg, to: &output)
        output.append(contentsOf: #"","data":"#.utf8)
        data.write(to: &output)
        output.append(UInt8(ascii: "}"))
        return output
    }
}

/// Where the GCCS endpoints live; the REST prefix is not public (docs/protocols.md, GCCS), so it is an option.
public struct GCCSPaths: Sendable, Equatable {
    /// Prefix of the REST calls (`{apiPrefix}/auth`, `/auth/nodes`, …).
    public var apiPrefix = "/api/v3" {
        didSet { (auth, nodes, complete) = Self.endpoints(under: apiPrefix) }
    }
    /// The raw-WebSocket URL path of the STOMP endpoint.
    public var socket = "/ws/v3/app/websocket"
    /// The destination statuses are sent to; also the subscription id the SDK uses.
    public var queue = "/user/queue"

    public init() {}

    // Kept, not joined at each use: the service compares every request's path with them, the flow sends to them.
    public private(set) var auth = "/api/v3/auth"
    public private(set) var nodes = "/api/v3/auth/nodes"
    public private(set) var complete = "/api/v3/auth/complete"

    private static func endpoints(under prefix: String) -> (auth: String, nodes: String, complete: String) {
        (prefix + "/auth", prefix + "/auth/nodes", prefix + "/auth/complete")
    }
}
