/// The client side of one HTTP/2 connection (RFC 9113), sans I/O: bytes and requests in, actions out.
///
/// Like ``WebSocketChannel`` it owns no socket and no clock, so every rule can be tested on bytes. It
/// writes the preface and SETTINGS, acknowledges the server's SETTINGS and applies them, answers PING,
/// keeps the stream states of RFC 9113 §5.1 (idle, open, half-closed, closed), keeps both flow-control
/// windows (connection and stream) in both directions — holding DATA back until the server opens its
/// window, and opening ours again as DATA is delivered — and stops opening streams after GOAWAY. A
/// connection error writes GOAWAY with its code and then ``Action/closeConnection(_:)``; a stream error
/// writes RST_STREAM and reports ``Action/streamReset(streamID:_:)``. What it shares with the server's
/// machine, ``HTTP2ServerConnection``, lives in `HTTP2Endpoint`.
///
/// Having no clock, it leaves the SETTINGS timeout to its owner (``isAwaitingSettingsAcknowledgement``,
/// ``settingsTimedOut()``). Server push is refused by SETTINGS_ENABLE_PUSH 0, so a PUSH_PROMISE is a
/// protocol error; priorities are ignored.
///
/// ```swift
/// var connection = HTTP2Connection()
/// perform(connection.start())                                // preface and SETTINGS
/// let (stream, actions) = try connection.sendHeaders(request, endStream: false)
/// perform(actions + (try connection.sendData(streamID: stream, body, endStream: true)))
/// perform(connection.received(bytesFromSocket))              // .headers, .data, writes of ACKs and WINDOW_UPDATEs
/// ```
public struct HTTP2Connection: Sendable {
    public typealias Settings = HTTP2Settings
    public typealias StreamState = HTTP2StreamState
    public typealias Action = HTTP2Action

    /// Why a call from the owner was refused; nothing was written.
    public enum UsageError: Error, Sendable, Hashable {
        /// The connection failed, or the server sent GOAWAY.
        case connectionClosing
        /// As many streams are open as the server's SETTINGS_MAX_CONCURRENT_STREAMS allows.
        case tooManyStreams
        /// Stream identifiers are used up (2^31); open a new connection.
        case streamIDsExhausted
        /// The stream is not one this side may send on (never opened, half-closed (local), or closed).
        case streamNotWritable(UInt32)
    }

    static let resetMemory = HTTP2Endpoint.resetMemory

    private var endpoint: HTTP2Endpoint
    private var nextStreamID: UInt32 = 1

    /// The SETTINGS this side announces.
    public var settings: Settings { endpoint.settings }
    /// The connection-level window the server granted: DATA bytes this side may still send.
    public var sendWindow: Int { endpoint.sendWindow }
    /// The connection-level window this side granted: DATA bytes the server may still send.
    public var receiveWindow: Int { endpoint.receiveWindow }

    /// Creates a connection announcing `settings`, with the window size clamped to 2^31-1 and the frame size to RFC 9113's range.
    public init(settings: Settings = Settings()) {
        endpoint = HTTP2Endpoint(role: .client, settings: settings)
    }

    /// The connection preface and this side's SETTINGS, to write first.
    public mutating func start() -> [Action] { [.write(endpoint.start())] }

    /// The state of a stream, as this side sees it.
    public func state(of streamID: UInt32) -> StreamState { endpoint.state(of: streamID) }

    /// The server's SETTINGS_MAX_CONCURRENT_STREAMS: how many streams this side may have open at once (no limit until it says).
    public var peerMaxConcurrentStreams: Int { endpoint.peerMaxConcurrentStreams }

    /// Streams open or half-closed: those counted against the server's SETTINGS_MAX_CONCURRENT_STREAMS.
    public var openStreamCount: Int { endpoint.streams.count }

    /// Whether ``sendHeaders(_:endStream:)`` would open a stream now.
    public var canOpenStream: Bool {
        endpoint.failed == nil && endpoint.goAwayLastStreamID == nil && !endpoint.closing && nextStreamID <= 0x7FFF_FFFF
            && endpoint.streams.count < endpoint.peerMaxConcurrentStreams
    }

    /// Whether request body bytes (or the END_STREAM after them) of a stream wait for the server to open its window.
    public func isHoldingData(of streamID: UInt32) -> Bool {
        guard let stream = endpoint.streams[streamID] else { return false }
        return !stream.pending.isEmpty || stream.pendingEndStream
    }

    /// The window the server granted on one stream, or nil when the stream is not open.
    public func sendWindow(of streamID: UInt32) -> Int? { endpoint.streams[streamID]?.sendWindow }

    /// The window this side granted on one stream, or nil when the stream is not open.
    public func receiveWindow(of streamID: UInt32) -> Int? { endpoint.streams[streamID]?.receiveWindow }

    /// Opens a stream with a request's header list; `endStream` when the request has no body.
    public mutating func sendHeaders(
        _ headers: [HPACKHeader], endStream: Bool
    ) throws(UsageError) -> (streamID: UInt32, actions: [Action]) {
        guard endpoint.failed == nil, endpoint.goAwayLastStreamID == nil, !endpoint.closing else { throw .connectionClosing }
        guard nextStreamID <= 0x7FFF_FFFF else { throw .streamIDsExhausted }
        guard endpoint.streams.count < endpoint.peerMaxConcurrentStreams else { throw .tooManyStreams }
        let id = nextStreamID
        nextStreamID += 2
        endpoint.open(id, endStream ? .halfClosedLocal : .open)
        return (id, [.write(endpoint.headerBytes(streamID: id, headers, endStream: endStream))])
    }

    /// Sends request body bytes, as far as the flow-control windows allow now; the rest goes out as the server opens them.
    public mutating func sendData(streamID: UInt32, _ data: [UInt8], endStream: Bool) throws(UsageError) -> [Action] {
        guard endpoint.failed == nil else { throw .connectionClosing }
        guard let stream = endpoint.streams[streamID], stream.state == .open || stream.state == .halfClosedRemote,
            !stream.pendingEndStream
        else { throw .streamNotWritable(streamID) }
        return endpoint.queue(data, on: streamID, endStream: endStream)
    }

    /// A PING to measure the round trip; the server's answer comes back as ``Action/pingAcknowledged(_:)``.
    public func ping(_ data: UInt64) -> [Action] {
        endpoint.failed == nil ? [.write(HTTP2FrameEncoder.encode(.ping(data: data)))] : []
    }

    /// Resets a stream this side no longer wants (a cancelled request).
    public mutating func resetStream(_ streamID: UInt32, code: HTTP2ErrorCode = .cancel) -> [Action] {
        endpoint.resetStream(streamID, code: code)
    }

    /// Whether the server has yet to acknowledge a SETTINGS this side sent; the owner, which has a clock, times it out.
    public var isAwaitingSettingsAcknowledgement: Bool { endpoint.isAwaitingSettingsAcknowledgement }

    /// Fails the connection with SETTINGS_TIMEOUT, for an owner whose timer ran out waiting for the ACK.
    public mutating func settingsTimedOut() -> [Action] { endpoint.settingsTimedOut() }

    /// Starts a graceful shutdown: GOAWAY with `code`; streams already open run to their end, no new one opens.
    ///
    /// The last stream id is 0 because a client processes no stream the server opens (push is off).
    public mutating func close(code: HTTP2ErrorCode = .noError) -> [Action] {
        endpoint.goAway(lastStreamID: 0, code: code)
    }

    /// Bytes read from the socket: the actions they call for, in order.
    public mutating func received(_ bytes: some Collection<UInt8>) -> [Action] { endpoint.received(bytes) }
}
