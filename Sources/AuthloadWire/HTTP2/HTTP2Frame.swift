/// One HTTP/2 frame (RFC 9113 §6) of the ten types the RFC defines, with its payload parsed.
///
/// Header blocks stay as HPACK fragments here: joining HEADERS with its CONTINUATIONs and decoding
/// the block is the connection's job, because HPACK state spans the whole connection. Padding is kept
/// as a length so a frame re-encodes to the same bytes; its content is always written as zeros.
public enum HTTP2Frame: Sendable, Hashable {
    case data(streamID: UInt32, data: [UInt8], endStream: Bool = false, padding: Int? = nil)
    case headers(
        streamID: UInt32, fragment: [UInt8], endStream: Bool = false, endHeaders: Bool = true,
        priority: HTTP2Priority? = nil, padding: Int? = nil)
    /// Stream prioritisation, which RFC 9113 deprecates: read and ignored.
    case priority(streamID: UInt32, HTTP2Priority)
    case rstStream(streamID: UInt32, HTTP2ErrorCode)
    case settings(ack: Bool = false, [HTTP2Setting] = [])
    case pushPromise(streamID: UInt32, promisedStreamID: UInt32, fragment: [UInt8], endHeaders: Bool = true, padding: Int? = nil)
    case ping(ack: Bool = false, data: UInt64)
    case goAway(lastStreamID: UInt32, HTTP2ErrorCode, debugData: [UInt8] = [])
    case windowUpdate(streamID: UInt32, increment: UInt32)
    case continuation(streamID: UInt32, fragment: [UInt8], endHeaders: Bool = true)

    /// The frame type byte of RFC 9113 §6.
    public var type: UInt8 {
        switch self {
        case .data: 0x0
        case .headers: 0x1
        case .priority: 0x2
        case .rstStream: 0x3
        case .settings: 0x4
        case .pushPromise: 0x5
        case .ping: 0x6
        case .goAway: 0x7
        case .windowUpdate: 0x8
        case .continuation: 0x9
        }
    }

    /// The stream the frame belongs to; 0 for the connection-level types.
    public var streamID: UInt32 {
        switch self {
        case .data(let id, _, _, _), .headers(let id, _, _, _, _, _), .priority(let id, _), .rstStream(let id, _),
            .pushPromise(let id, _, _, _, _), .windowUpdate(let id, _), .continuation(let id, _, _):
            id
        case .settings, .ping, .goAway: 0
        }
    }
}

/// The dependency and weight of RFC 9113 §5.3.2, carried by PRIORITY and by HEADERS with the PRIORITY flag.
public struct HTTP2Priority: Sendable, Hashable {
    public var exclusive: Bool
    public var dependency: UInt32
    /// The weight minus one, as sent (0–255 for weights 1–256).
    public var weight: UInt8

    public init(exclusive: Bool = false, dependency: UInt32 = 0, weight: UInt8 = 15) {
        self.exclusive = exclusive
        self.dependency = dependency & 0x7FFF_FFFF
        self.weight = weight
    }
}

/// One SETTINGS parameter: its identifier and value (RFC 9113 §6.5.1).
public struct HTTP2Setting: Sendable, Hashable, CustomStringConvertible {
    /// A SETTINGS identifier; unknown identifiers are kept, since RFC 9113 §6.5.2 says to ignore them, not refuse them.
    public struct ID: RawRepresentable, Sendable, Hashable {
        public let rawValue: UInt16
        public init(rawValue: UInt16) { self.rawValue = rawValue }

        public static let headerTableSize = ID(rawValue: 0x1)
        public static let enablePush = ID(rawValue: 0x2)
        public static let maxConcurrentStreams = ID(rawValue: 0x3)
        public static let initialWindowSize = ID(rawValue: 0x4)
        public static let maxFrameSize = ID(rawValue: 0x5)
        public static let maxHeaderListSize = ID(rawValue: 0x6)
    }

    public var id: ID
    public var value: UInt32

    public init(_ id: ID, _ value: UInt32) {
        self.id = id
        self.value = value
    }

    public var description: String { "0x\(String(id.rawValue, radix: 16))=\(value)" }
}
