/// An RFC 9113 §7 error code, as RST_STREAM and GOAWAY carry it and as a failed connection reports it.
///
/// A struct rather than an enum because a peer may send codes this side does not know, and RFC 9113
/// §7 requires treating those like INTERNAL_ERROR without refusing the frame that carried them.
public struct HTTP2ErrorCode: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// Graceful shutdown, or a stream ended without trouble.
    public static let noError = HTTP2ErrorCode(rawValue: 0x0)
    /// A generic protocol violation.
    public static let protocolError = HTTP2ErrorCode(rawValue: 0x1)
    public static let internalError = HTTP2ErrorCode(rawValue: 0x2)
    /// The peer sent more than a flow-control window allowed, or grew a window past 2^31-1.
    public static let flowControlError = HTTP2ErrorCode(rawValue: 0x3)
    /// SETTINGS went unacknowledged too long.
    public static let settingsTimeout = HTTP2ErrorCode(rawValue: 0x4)
    /// A frame arrived on a stream already half-closed for that direction.
    public static let streamClosed = HTTP2ErrorCode(rawValue: 0x5)
    /// A frame has the wrong size for its type, or exceeds SETTINGS_MAX_FRAME_SIZE.
    public static let frameSizeError = HTTP2ErrorCode(rawValue: 0x6)
    public static let refusedStream = HTTP2ErrorCode(rawValue: 0x7)
    public static let cancel = HTTP2ErrorCode(rawValue: 0x8)
    /// The HPACK state cannot be kept in step.
    public static let compressionError = HTTP2ErrorCode(rawValue: 0x9)
    public static let connectError = HTTP2ErrorCode(rawValue: 0xA)
    public static let enhanceYourCalm = HTTP2ErrorCode(rawValue: 0xB)
    public static let inadequateSecurity = HTTP2ErrorCode(rawValue: 0xC)
    public static let http11Required = HTTP2ErrorCode(rawValue: 0xD)

    private static let names = [
        "NO_ERROR", "PROTOCOL_ERROR", "INTERNAL_ERROR", "FLOW_CONTROL_ERROR", "SETTINGS_TIMEOUT", "STREAM_CLOSED",
        "FRAME_SIZE_ERROR", "REFUSED_STREAM", "CANCEL", "COMPRESSION_ERROR", "CONNECT_ERROR", "ENHANCE_YOUR_CALM",
        "INADEQUATE_SECURITY", "HTTP_1_1_REQUIRED"
    ]

    /// The RFC 9113 name, such as `FRAME_SIZE_ERROR`, or the hex value of an unknown code.
    public var description: String {
        rawValue < Self.names.count ? Self.names[Int(rawValue)] : "0x" + String(rawValue, radix: 16)
    }
}
