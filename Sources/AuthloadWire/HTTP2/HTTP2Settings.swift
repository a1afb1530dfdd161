/// The SETTINGS one end of an HTTP/2 connection announces (RFC 9113 §6.5.2); push is always disabled.
///
/// Both machines, ``HTTP2Connection`` (client) and ``HTTP2ServerConnection``, announce one of these in their
/// first SETTINGS frame and apply it once the peer acknowledges it.
public struct HTTP2Settings: Sendable, Hashable {
    public var headerTableSize = 4096
    /// For a server, the streams a client may have open at once: one more is refused with REFUSED_STREAM.
    public var maxConcurrentStreams = 100
    public var initialWindowSize = 65_535
    public var maxFrameSize = HTTP2FrameDecoder.defaultMaxFrameSize
    public var maxHeaderListSize = 64 * 1024

    public init() {}

    /// The same settings with the window size clamped to 2^31-1 and the frame size to RFC 9113's range.
    var clamped: HTTP2Settings {
        var settings = self
        settings.initialWindowSize = min(max(initialWindowSize, 0), Int(Int32.max))
        settings.maxFrameSize = min(max(maxFrameSize, 16_384), 16_777_215)
        return settings
    }

    var frame: HTTP2Frame {
        .settings([
            HTTP2Setting(.headerTableSize, UInt32(clamping: headerTableSize)), HTTP2Setting(.enablePush, 0),
            HTTP2Setting(.maxConcurrentStreams, UInt32(clamping: maxConcurrentStreams)),
            HTTP2Setting(.initialWindowSize, UInt32(clamping: min(initialWindowSize, Int(Int32.max)))),
            HTTP2Setting(.maxFrameSize, UInt32(clamping: min(max(maxFrameSize, 16_384), 16_777_215))),
            HTTP2Setting(.maxHeaderListSize, UInt32(clamping: maxHeaderListSize))
        ])
    }
}

/// A stream's state as RFC 9113 §5.1 names it, for connections on which no stream is ever reserved (push is off).
public enum HTTP2StreamState: Sendable, Hashable {
    case idle
    case open
    /// This side sent END_STREAM; the peer may still send.
    case halfClosedLocal
    /// The peer sent END_STREAM; this side may still send.
    case halfClosedRemote
    case closed
}

/// What an HTTP/2 connection machine asks its owner to do, in order.
public enum HTTP2Action: Sendable, Hashable {
    /// Bytes to write to the socket.
    case write([UInt8])
    /// A complete header block from the peer, decoded: a request or response head, or trailers.
    case headers(streamID: UInt32, [HPACKHeader], endStream: Bool)
    /// DATA from the peer, its padding removed.
    case data(streamID: UInt32, [UInt8], endStream: Bool)
    /// The stream ended abnormally: the peer reset it, or this side did after a stream error.
    case streamReset(streamID: UInt32, HTTP2ErrorCode)
    /// The peer acknowledged a PING this side sent.
    case pingAcknowledged(UInt64)
    /// The peer will process no stream above `lastStreamID`; this side opens no new one.
    case goAway(lastStreamID: UInt32, HTTP2ErrorCode, debugData: [UInt8])
    /// Close the socket: after this side wrote GOAWAY for a connection error with this code.
    case closeConnection(HTTP2ErrorCode)
}
