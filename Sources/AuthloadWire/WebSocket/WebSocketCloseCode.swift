/// A status code from a WebSocket Close frame (RFC 6455 §7.4), or one reported locally about a closure.
///
/// Codes are open-ended (3000–4999 belong to applications), so this is a wrapped integer with the
/// registered values as constants rather than a closed enum.
///
/// ```swift
/// let frame = WebSocketFrame.close(code: .goingAway, reason: "draining")
/// if code == .messageTooBig { … }
/// ```
public struct WebSocketCloseCode: RawRepresentable, Sendable, Hashable, ExpressibleByIntegerLiteral, CustomStringConvertible {
    public let rawValue: UInt16

    public init(rawValue: UInt16) { self.rawValue = rawValue }
    public init(_ rawValue: UInt16) { self.rawValue = rawValue }
    public init(integerLiteral value: UInt16) { self.rawValue = value }

    /// 1000: the purpose of the connection has been fulfilled.
    public static let normalClosure: Self = 1000
    /// 1001: an endpoint is going away (server shutting down, page navigated away).
    public static let goingAway: Self = 1001
    /// 1002: the peer broke the protocol.
    public static let protocolError: Self = 1002
    /// 1003: a data type the endpoint cannot accept (e.g. binary to a text-only endpoint).
    public static let unsupportedData: Self = 1003
    /// 1005: the Close frame carried no code. Reported locally, never sent.
    public static let noStatusReceived: Self = 1005
    /// 1006: the connection ended without a Close frame (or never opened). Reported locally, never sent.
    public static let abnormalClosure: Self = 1006
    /// 1007: message data did not match its type, such as invalid UTF-8 in a text message.
    public static let invalidPayload: Self = 1007
    /// 1008: a message broke the endpoint's policy; the generic code when no other fits.
    public static let policyViolation: Self = 1008
    /// 1009: a frame or message was too big to process.
    public static let messageTooBig: Self = 1009
    /// 1010: the client expected the server to negotiate an extension it did not.
    public static let mandatoryExtension: Self = 1010
    /// 1011: the server hit an unexpected condition.
    public static let internalError: Self = 1011
    /// 1012: the service is restarting (IANA registry, not RFC 6455 itself).
    public static let serviceRestart: Self = 1012
    /// 1013: try again later, e.g. overload (IANA registry).
    public static let tryAgainLater: Self = 1013
    /// 1014: a gateway got an invalid response upstream (IANA registry).
    public static let badGateway: Self = 1014
    /// 1015: the TLS handshake failed. Reported locally, never sent.
    public static let tlsHandshakeFailure: Self = 1015

    /// Whether the code may appear in a Close frame.
    ///
    /// Accepted: the defined codes 1000–1003 and 1007–1014, and 3000–4999 (registered libraries and
    /// private use). Rejected: below 1000, 1004 (reserved), 1005, 1006 and 1015 (local-only), the
    /// unassigned rest of 1000–2999, and 5000 upwards, which RFC 6455 §7.4.2 leaves undefined.
    public var mayBeSent: Bool {
        switch rawValue {
        case 1000...1003, 1007...1014, 3000...4999: true
        default: false
        }
    }

    public var description: String {
        let name: String? =
            switch self {
            case .normalClosure: "normal closure"
            case .goingAway: "going away"
            case .protocolError: "protocol error"
            case .unsupportedData: "unsupported data"
            case .noStatusReceived: "no status received"
            case .abnormalClosure: "abnormal closure"
            case .invalidPayload: "invalid payload data"
            case .policyViolation: "policy violation"
            case .messageTooBig: "message too big"
            case .mandatoryExtension: "mandatory extension"
            case .internalError: "internal error"
            case .serviceRestart: "service restart"
            case .tryAgainLater: "try again later"
            case .badGateway: "bad gateway"
            case .tlsHandshakeFailure: "TLS handshake failure"
            default: nil
            }
        return name.map { "\(rawValue) (\($0))" } ?? "\(rawValue)"
    }
}
