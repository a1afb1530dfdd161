/// The client side of one HTTP/2 connection (RFC 9113), sans I/O: bytes and requests in, actions out.
///
/// Like ``WebSocketChannel`` it owns no socket and no clock, so every rule can be tested on bytes. It
/// writes the preface and SETTINGS, acknowledges the server's SETTINGS and applies them, answers PING,
/// keeps the stream states of RFC 9113 §5.1 (idle, open, half-closed, closed), keeps both flow-control
/// windows (connection and stream) in both directions — holding DATA back until the server opens its
/// window, and opening ours again as DATA is delivered — and stops opening streams after GOAWAY. A
/// connection error writes GOAWAY with its code and then ``Action/closeConnection(_:)``; a stream error
/// writes RST_STREAM and reports ``Action/streamReset(streamID:_:)``.
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
    /// The SETTINGS this side announces (push is always disabled).
    public struct Settings: Sendable, Hashable {
        public var headerTableSize = 4096
        public var maxConcurrentStreams = 100
        public var initialWindowSize = 65_535
        public var maxFrameSize = HTTP2FrameDecoder.defaultMaxFrameSize
        public var maxHeaderListSize = 64 * 1024

        public init() {}

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

    /// A stream's state as RFC 9113 §5.1 names it, for a client that never reserves streams.
    public enum StreamState: Sendable, Hashable {
        case idle
        case open
        /// This side sent END_STREAM; the response is still coming.
        case halfClosedLocal
        /// The server sent END_STREAM; this side may still send.
        case halfClosedRemote
        case closed
    }

    /// What the connection asks its owner to do, in order.
    public enum Action: Sendable, Hashable {
        /// Bytes to write to the socket.
        case write([UInt8])
        /// A complete header block from the server, decoded: the response head or trailers.
        case headers(streamID: UInt32, [HPACKHeader], endStream: Bool)
        /// DATA from the server, its padding removed.
        case data(streamID: UInt32, [UInt8], endStream: Bool)
        /// The stream ended abnormally: the server reset it, or this side did after a stream error.
        case streamReset(streamID: UInt32, HTTP2ErrorCode)
        /// The server acknowledged a PING this side sent.
        case pingAcknowledged(UInt64)
        /// The server will process no stream above `lastStreamID`; no new stream can be opened.
        case goAway(lastStreamID: UInt32, HTTP2ErrorCode, debugData: [UInt8])
        /// Close the socket: after this side wrote GOAWAY for a connection error with this code.
        case closeConnection(HTTP2ErrorCode)
    }

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

    private struct Stream: Sendable {
        var state: StreamState
        var sendWindow: Int
        var receiveWindow: Int
        var pending: [UInt8] = []
        var pendingEndStream = false
    }

    private static let maxWindow = Int(Int32.max)
    private static let defaultWindow = 65_535

    public let settings: Settings
    private var decoder = HTTP2FrameDecoder(start: .serverPreface)
    private var encoder = HPACKEncoder()
    private var hpack = HPACKDecoder()
    private var unacknowledged: [Settings] = []
    /// SETTINGS_INITIAL_WINDOW_SIZE as the server applies it: ours once acknowledged, the default before.
    private var receiveInitialWindow = defaultWindow
    private var peerInitialWindow = defaultWindow
    private var peerMaxFrameSize = HTTP2FrameDecoder.defaultMaxFrameSize
    /// The server's SETTINGS_MAX_CONCURRENT_STREAMS: how many streams this side may have open at once (no limit until it says).
    public private(set) var peerMaxConcurrentStreams = Int.max
    private var streams: [UInt32: Stream] = [:]
    private var nextStreamID: UInt32 = 1
    private var headerBlock: (streamID: UInt32, endStream: Bool, bytes: [UInt8])?
    private var goAwayLastStreamID: UInt32?
    /// Streams this side reset, oldest first: frames the server sent before it saw the RST_STREAM are ignored (RFC 9113
    /// §5.1). Only the latest ``resetMemory`` are kept, so a connection that lives through a soak's millions of streams
    /// holds a bounded list; a frame for a stream reset that long ago is no longer in flight, and is a protocol error.
    private var resetByUs: [UInt32] = []
    static let resetMemory = 128
    private var failed: HTTP2ErrorCode?
    /// Set once this side sent GOAWAY of its own.
    private var closing = false

    /// The connection-level window the server granted: DATA bytes this side may still send.
    public private(set) var sendWindow = defaultWindow
    /// The connection-level window this side granted: DATA bytes the server may still send.
    public private(set) var receiveWindow = defaultWindow

    /// Creates a connection announcing `settings`, with the window size clamped to 2^31-1 and the frame size to RFC 9113's range.
    public init(settings: Settings = Settings()) {
        var settings = settings
        settings.initialWindowSize = min(max(settings.initialWindowSize, 0), Self.maxWindow)
        settings.maxFrameSize = min(max(settings.maxFrameSize, 16_384), 16_777_215)
        self.settings = settings
        hpack.maxHeaderListSize = settings.maxHeaderListSize
    }

    /// The connection preface and this side's SETTINGS, to write first.
    public mutating func start() -> [Action] {
        unacknowledged.append(settings)
        return [.write(HTTP2FrameDecoder.clientPreface + HTTP2FrameEncoder.encode(settings.frame))]
    }

    /// The state of a stream, as this side sees it.
    public func state(of streamID: UInt32) -> StreamState {
        if let stream = streams[streamID] { return stream.state }
        return streamID % 2 == 1 && streamID < nextStreamID ? .closed : .idle
    }

    /// Streams open or half-closed: those counted against the server's SETTINGS_MAX_CONCURRENT_STREAMS.
    public var openStreamCount: Int { streams.count }

    /// Whether ``sendHeaders(_:endStream:)`` would open a stream now.
    public var canOpenStream: Bool {
        failed == nil && goAwayLastStreamID == nil && !closing && nextStreamID <= 0x7FFF_FFFF
            && streams.count < peerMaxConcurrentStreams
    }

    /// Whether request body bytes (or the END_STREAM after them) of a stream wait for the server to open its window.
    public func isHoldingData(of streamID: UInt32) -> Bool {
        guard let stream = streams[streamID] else { return false }
        return !stream.pending.isEmpty || stream.pendingEndStream
    }

    /// The window the server granted on one stream, or nil when the stream is not open.
    public func sendWindow(of streamID: UInt32) -> Int? { streams[streamID]?.sendWindow }

    /// The window this side granted on one stream, or nil when the stream is not open.
    public func receiveWindow(of streamID: UInt32) -> Int? { streams[streamID]?.receiveWindow }

    /// Opens a stream with a request's header list; `endStream` when the request has no body.
    public mutating func sendHeaders(
        _ headers: [HPACKHeader], endStream: Bool
    ) throws(UsageError) -> (streamID: UInt32, actions: [Action]) {
        guard failed == nil, goAwayLastStreamID == nil, !closing else { throw .connectionClosing }
        guard nextStreamID <= 0x7FFF_FFFF else { throw .streamIDsExhausted }
        guard streams.count < peerMaxConcurrentStreams else { throw .tooManyStreams }
        let id = nextStreamID
        nextStreamID += 2
        streams[id] = Stream(
            state: endStream ? .halfClosedLocal : .open, sendWindow: peerInitialWindow, receiveWindow: receiveInitialWindow)
        let frames = HTTP2FrameEncoder.headerFrames(
            streamID: id, block: encoder.encode(headers), endStream: endStream, maxFrameSize: peerMaxFrameSize)
        var bytes: [UInt8] = []
        for frame in frames { HTTP2FrameEncoder.encode(frame, into: &bytes) }
        return (id, [.write(bytes)])
    }

    /// Sends request body bytes, as far as the flow-control windows allow now; the rest goes out as the server opens them.
    public mutating func sendData(streamID: UInt32, _ data: [UInt8], endStream: Bool) throws(UsageError) -> [Action] {
        guard failed == nil else { throw .connectionClosing }
        guard var stream = streams[streamID], stream.state == .open || stream.state == .halfClosedRemote,
            !stream.pendingEndStream
        else { throw .streamNotWritable(streamID) }
        stream.pending += data
        stream.pendingEndStream = endStream
        streams[streamID] = stream
        return flush()
    }

    /// A PING to measure the round trip; the server's answer comes back as ``Action/pingAcknowledged(_:)``.
    public func ping(_ data: UInt64) -> [Action] {
        failed == nil ? [.write(HTTP2FrameEncoder.encode(.ping(data: data)))] : []
    }

    /// Resets a stream this side no longer wants (a cancelled request).
    public mutating func resetStream(_ streamID: UInt32, code: HTTP2ErrorCode = .cancel) -> [Action] {
        guard failed == nil, streams.removeValue(forKey: streamID) != nil else { return [] }
        rememberReset(streamID)
        return [.write(HTTP2FrameEncoder.encode(.rstStream(streamID: streamID, code)))]
    }

    /// Whether the server has yet to acknowledge a SETTINGS this side sent; the owner, which has a clock, times it out.
    public var isAwaitingSettingsAcknowledgement: Bool { !unacknowledged.isEmpty }

    /// Fails the connection with SETTINGS_TIMEOUT, for an owner whose timer ran out waiting for the ACK.
    public mutating func settingsTimedOut() -> [Action] {
        var actions: [Action] = []
        fail(.settingsTimeout, "SETTINGS not acknowledged in time", into: &actions)
        return actions
    }

    /// Starts a graceful shutdown: GOAWAY with `code`; streams already open run to their end, no new one opens.
    ///
    /// The last stream id is 0 because a client processes no stream the server opens (push is off).
    public mutating func close(code: HTTP2ErrorCode = .noError) -> [Action] {
        guard failed == nil, !closing else { return [] }
        closing = true
        return [.write(HTTP2FrameEncoder.encode(.goAway(lastStreamID: 0, code)))]
    }

    /// Bytes read from the socket: the actions they call for, in order.
    public mutating func received(_ bytes: some Collection<UInt8>) -> [Action] {
        guard failed == nil else { return [] }
        decoder.feed(bytes)
        var actions: [Action] = []
        do throws(HTTP2FrameError) {
            while failed == nil, case .frame(let frame) = try decoder.next() {
                handle(frame, into: &actions)
            }
        } catch {
            fail(error.code, error.description, into: &actions)
        }
        return actions
    }

    // MARK: - Frames from the server

    private mutating func handle(_ frame: HTTP2Frame, into actions: inout [Action]) {
        switch frame {
        case .settings(let ack, let values):
            if ack {
                settingsAcknowledged()
            } else {
                applySettings(values, into: &actions)
            }
        case .ping(let ack, let data):
            actions.append(ack ? .pingAcknowledged(data) : .write(HTTP2FrameEncoder.encode(.ping(ack: true, data: data))))
        case .goAway(let last, let code, let debugData):
            goAwayLastStreamID = min(goAwayLastStreamID ?? last, last)
            actions.append(.goAway(lastStreamID: last, code, debugData: debugData))
            for id in streams.keys.sorted() where id > last {
                streams[id] = nil
                rememberReset(id)
                actions.append(.streamReset(streamID: id, .refusedStream))
            }
        case .windowUpdate(let id, let increment):
            windowUpdate(id, Int(increment), into: &actions)
        case .rstStream(let id, let code):
            if state(of: id) == .idle { return fail(.protocolError, "RST_STREAM on idle stream \(id)", into: &actions) }
            if streams.removeValue(forKey: id) != nil { actions.append(.streamReset(streamID: id, code)) }
        case .headers(let id, let fragment, let endStream, let endHeaders, _, _):
            headerBlock = (id, endStream, fragment)
            if endHeaders { headersComplete(into: &actions) }
        case .continuation(_, let fragment, let endHeaders):
            headerBlock?.bytes += fragment
            if (headerBlock?.bytes.count ?? 0) > 4 * settings.maxHeaderListSize + 65_536 {
                return fail(.enhanceYourCalm, "header block past four times SETTINGS_MAX_HEADER_LIST_SIZE", into: &actions)
            }
            if endHeaders { headersComplete(into: &actions) }
        case .data(let id, let data, let endStream, let padding):
            received(data, padding: padding, on: id, endStream: endStream, into: &actions)
        case .pushPromise:
            fail(.protocolError, "PUSH_PROMISE with SETTINGS_ENABLE_PUSH 0", into: &actions)
        case .priority:
            break
        }
    }

    private mutating func applySettings(_ values: [HTTP2Setting], into actions: inout [Action]) {
        for setting in values {
            let value = Int(setting.value)
            switch setting.id {
            case .headerTableSize: encoder.setMaxTableSize(min(value, 4096))
            case .enablePush where value != 0: return fail(.protocolError, "server sent SETTINGS_ENABLE_PUSH 1", into: &actions)
            case .maxConcurrentStreams: peerMaxConcurrentStreams = value
            case .maxFrameSize: peerMaxFrameSize = value
            case .initialWindowSize:
                let delta = value - peerInitialWindow
                peerInitialWindow = value
                for id in streams.keys {
                    streams[id]!.sendWindow += delta
                    if streams[id]!.sendWindow > Self.maxWindow {
                        return fail(.flowControlError, "SETTINGS_INITIAL_WINDOW_SIZE overflows stream \(id)", into: &actions)
                    }
                }
            default: break
            }
        }
        actions.append(.write(HTTP2FrameEncoder.encode(.settings(ack: true))))
        actions += flush()
    }

    private mutating func settingsAcknowledged() {
        guard !unacknowledged.isEmpty else { return }
        let acknowledged = unacknowledged.removeFirst()
        decoder.maxFrameSize = min(max(acknowledged.maxFrameSize, 16_384), 16_777_215)
        hpack.setMaxTableSize(acknowledged.headerTableSize)
        let delta = acknowledged.initialWindowSize - receiveInitialWindow
        receiveInitialWindow = acknowledged.initialWindowSize
        for id in streams.keys { streams[id]!.receiveWindow += delta }
    }

    private mutating func windowUpdate(_ id: UInt32, _ increment: Int, into actions: inout [Action]) {
        if id == 0 {
            sendWindow += increment
            guard sendWindow <= Self.maxWindow else {
                return fail(.flowControlError, "connection window past 2^31-1", into: &actions)
            }
        } else if state(of: id) == .idle {
            return fail(.protocolError, "WINDOW_UPDATE on idle stream \(id)", into: &actions)
        } else if streams[id] != nil {
            streams[id]!.sendWindow += increment
            if streams[id]!.sendWindow > Self.maxWindow { return reset(id, .flowControlError, into: &actions) }
        }
        actions += flush()
    }

    private mutating func headersComplete(into actions: inout [Action]) {
        guard let block = headerBlock else { return }
        headerBlock = nil
        let id = block.streamID
        let headers: [HPACKHeader]
        do throws(HPACKError) {
            // Decoded whatever the stream's state, so the HPACK table stays in step with the server's.
            headers = try hpack.decode(block.bytes)
        } catch  where error.reason == .headerListTooLarge {
            return reset(id, .cancel, into: &actions)
        } catch {
            return fail(.compressionError, error.description, into: &actions)
        }
        switch state(of: id) {
        case .idle: return fail(.protocolError, "HEADERS on stream \(id), which this side never opened", into: &actions)
        case .closed where resetByUs.contains(id): return
        case .closed: return fail(.streamClosed, "HEADERS on closed stream \(id)", into: &actions)
        case .halfClosedRemote: return reset(id, .streamClosed, into: &actions)
        case .open, .halfClosedLocal: break
        }
        actions.append(.headers(streamID: id, headers, endStream: block.endStream))
        if block.endStream { remoteEnded(id) }
    }

    private mutating func received(
        _ data: [UInt8], padding: Int?, on id: UInt32, endStream: Bool, into actions: inout [Action]
    ) {
        let length = data.count + (padding.map { $0 + 1 } ?? 0)
        guard length <= receiveWindow else {
            return fail(.flowControlError, "DATA of \(length) bytes past the connection window \(receiveWindow)", into: &actions)
        }
        receiveWindow -= length
        if receiveWindow < Self.defaultWindow / 2 {
            actions.append(
                .write(HTTP2FrameEncoder.encode(.windowUpdate(streamID: 0, increment: UInt32(Self.defaultWindow - receiveWindow)))))
            receiveWindow = Self.defaultWindow
        }
        switch state(of: id) {
        case .idle: return fail(.protocolError, "DATA on idle stream \(id)", into: &actions)
        case .closed where resetByUs.contains(id): return
        case .closed: return fail(.streamClosed, "DATA on closed stream \(id)", into: &actions)
        case .halfClosedRemote: return reset(id, .streamClosed, into: &actions)
        case .open, .halfClosedLocal: break
        }
        guard length <= streams[id]!.receiveWindow else { return reset(id, .flowControlError, into: &actions) }
        streams[id]!.receiveWindow -= length
        actions.append(.data(streamID: id, data, endStream: endStream))
        if endStream {
            remoteEnded(id)
        } else if streams[id]!.receiveWindow < receiveInitialWindow / 2 {
            let increment = receiveInitialWindow - streams[id]!.receiveWindow
            streams[id]!.receiveWindow = receiveInitialWindow
            actions.append(.write(HTTP2FrameEncoder.encode(.windowUpdate(streamID: id, increment: UInt32(increment)))))
        }
    }

    // MARK: - State changes

    private mutating func remoteEnded(_ id: UInt32) {
        if streams[id]?.state == .halfClosedLocal {
            streams[id] = nil
        } else {
            streams[id]?.state = .halfClosedRemote
        }
    }

    /// Writes what the windows allow of each stream's pending body, lowest stream first.
    private mutating func flush() -> [Action] {
        var bytes: [UInt8] = []
        for id in streams.keys.sorted() {
            guard var stream = streams[id] else { continue }
            while !stream.pending.isEmpty || stream.pendingEndStream {
                // A window can be negative after SETTINGS lowered it; an empty DATA with END_STREAM needs none.
                let count = max(0, min(stream.pending.count, sendWindow, stream.sendWindow, peerMaxFrameSize))
                guard count > 0 || stream.pending.isEmpty else { break }
                let chunk = Array(stream.pending.prefix(count))
                stream.pending.removeFirst(count)
                sendWindow -= count
                stream.sendWindow -= count
                let last = stream.pending.isEmpty && stream.pendingEndStream
                HTTP2FrameEncoder.encode(.data(streamID: id, data: chunk, endStream: last), into: &bytes)
                if last {
                    stream.pendingEndStream = false
                    stream.state = stream.state == .halfClosedRemote ? .closed : .halfClosedLocal
                }
            }
            streams[id] = stream.state == .closed ? nil : stream
        }
        return bytes.isEmpty ? [] : [.write(bytes)]
    }

    private mutating func rememberReset(_ id: UInt32) {
        resetByUs.append(id)
        if resetByUs.count > Self.resetMemory { resetByUs.removeFirst() }
    }

    private mutating func reset(_ id: UInt32, _ code: HTTP2ErrorCode, into actions: inout [Action]) {
        streams[id] = nil
        rememberReset(id)
        actions.append(.write(HTTP2FrameEncoder.encode(.rstStream(streamID: id, code))))
        actions.append(.streamReset(streamID: id, code))
    }

    private mutating func fail(_ code: HTTP2ErrorCode, _ detail: String, into actions: inout [Action]) {
        guard failed == nil else { return }
        failed = code
        streams = [:]
        actions.append(.write(HTTP2FrameEncoder.encode(.goAway(lastStreamID: 0, code, debugData: Array(detail.utf8.prefix(256))))))
        actions.append(.closeConnection(code))
    }
}
