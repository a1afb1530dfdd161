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

    /// The status's place in ``all`` (the order of the cases), by a switch: a search of ``all`` read a lazy global and
    /// compared strings' worth of cases at every status the flow and the service handle.
    @inlinable
    public var ordinal: Int {
        switch self {
        case .requestAuth: 0
        case .createChannel: 1
        case .selectNodes: 2
        case .startAuth: 3
        case .startVerificationOfNodes: 4
        case .completeVerificationOfNodes: 5
        case .requestCancel: 6
        case .authCanceled: 7
        case .authFailed: 8
        case .authCompleted: 9
        case .authTimeout: 10
        }
    }
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
    ///
    /// A body laid out as ``serialized()`` writes it, with a plain code and message (every one the staging service
    /// sends), is read without building its outer object; any other is parsed whole.
    public init?(body: [UInt8]) {
        if let written = Self.readWritten(body) {
            self = written
            return
        }
        self.init(parsing: body)
    }

    /// ``init(body:)`` by parsing the whole body.
    init?(parsing body: [UInt8]) {
        guard let json = try? JSONValue.parse(body), let code = json["rtCode"]?.intValue else { return nil }
        self.init(rtCode: code, rtMsg: json["rtMsg"]?.stringValue ?? "", data: json["data"] ?? .null)
    }

    /// The envelope of `{"rtCode":<digits>,"rtMsg":"<printable ASCII>","data":<value>}`, or nil for any other body.
    ///
    /// Such a body is a JSON object with those three members and no others, and parsing it whole would give the same
    /// code, message and data: the code has no sign, fraction or leading zero and at most 15 digits (a `Double` holds it
    /// exactly), the message no escape, and the data is parsed as the value it is.
    static func readWritten(_ body: [UInt8]) -> GCCSEnvelope? {
        body.withUnsafeBufferPointer { bytes -> GCCSEnvelope? in
            var index = 0
            func expect(_ literal: StaticString) -> Bool {
                let count = literal.utf8CodeUnitCount
                guard bytes.count - index >= count else { return false }
                for offset in 0..<count where bytes[index + offset] != literal.utf8Start[offset] { return false }
                index += count
                return true
            }
            guard expect(#"{"rtCode":"#) else { return nil }
            let digits = index
            var code = 0
            while index < bytes.count, bytes[index] &- UInt8(ascii: "0") < 10 {
                code = code * 10 + Int(bytes[index] &- UInt8(ascii: "0"))
                index += 1
                guard index - digits <= 15 else { return nil }
            }
            guard index > digits, bytes[digits] != UInt8(ascii: "0") || index - digits == 1 else { return nil }
            guard expect(#","rtMsg":""#) else { return nil }
            let message = index
            while index < bytes.count, (0x20...0x7E).contains(bytes[index]), bytes[index] != UInt8(ascii: "\"") {
                guard bytes[index] != UInt8(ascii: "\\") else { return nil }
                index += 1
            }
            let rtMsg = String(decoding: UnsafeBufferPointer(rebasing: bytes[message..<index]), as: UTF8.self)
            guard expect(#"","data":"#), bytes.count - index >= 2, bytes[bytes.count - 1] == UInt8(ascii: "}"),
                let data = try? JSONValue.parse(UnsafeBufferPointer(rebasing: bytes[index..<(bytes.count - 1)]))
            else { return nil }
            return GCCSEnvelope(rtCode: code, rtMsg: rtMsg, data: data)
        }
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
