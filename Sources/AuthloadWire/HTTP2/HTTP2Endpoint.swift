/// What both ends of an HTTP/2 connection (RFC 9113) do alike, sans I/O: the frames, the SETTINGS exchange,
/// HPACK in both directions, the stream states of §5.1 and flow control both ways.
///
/// ``HTTP2Connection`` (the client) and ``HTTP2ServerConnection`` each hold one and add what only their role
/// does: a client opens streams, a server takes them (within its SETTINGS_MAX_CONCURRENT_STREAMS) and checks
/// each request head. Where a rule differs by role (who may open a stream, what a GOAWAY received means,
/// who may send SETTINGS_ENABLE_PUSH 1) the endpoint asks ``role``. Streams are only ever opened by the
/// client, with odd identifiers, since push is off on both sides.
struct HTTP2Endpoint: Sendable {
    enum Role: Sendable, Hashable {
        case client
        case server
    }

    struct Stream: Sendable {
        var state: HTTP2StreamState
        var sendWindow: Int
        var receiveWindow: Int
        var pending: [UInt8] = []
        var pendingEndStream = false
    }

    static let maxWindow = Int(Int32.max)
    static let defaultWindow = 65_535
    /// Streams this side reset that are remembered: frames the peer sent before it saw the RST_STREAM are ignored (RFC
    /// 9113 §5.1). Only the latest are kept, so a connection that lives through a soak's millions of streams holds a
    /// bounded list; a frame for a stream reset that long ago is no longer in flight, and is a protocol error.
    static let resetMemory = 128

    let role: Role
    let settings: HTTP2Settings
    private var decoder: HTTP2FrameDecoder
    private var encoder = HPACKEncoder()
    private var hpack = HPACKDecoder()
    private var unacknowledged: [HTTP2Settings] = []
    /// SETTINGS_INITIAL_WINDOW_SIZE as the peer applies it: ours once acknowledged, the default before.
    private var receiveInitialWindow = defaultWindow
    private var peerInitialWindow = defaultWindow
    private(set) var peerMaxFrameSize = HTTP2FrameDecoder.defaultMaxFrameSize
    private(set) var peerMaxConcurrentStreams = Int.max
    private(set) var streams: [UInt32: Stream] = [:]
    /// The highest stream opened on the connection: an odd id at or below it that is not in ``streams`` is closed.
    private(set) var lastOpenedStreamID: UInt32 = 0
    private var headerBlock: (streamID: UInt32, endStream: Bool, bytes: [UInt8])?
    /// The lowest last stream of the GOAWAYs the peer sent.
    private(set) var goAwayLastStreamID: UInt32?
    private var resetByUs: [UInt32] = []
    private(set) var failed: HTTP2ErrorCode?
    /// Set once this side sent GOAWAY of its own.
    private(set) var closing = false

    /// The connection-level window the peer granted: DATA bytes this side may still send.
    private(set) var sendWindow = defaultWindow
    /// The connection-level window this side granted: DATA bytes the peer may still send.
    private(set) var receiveWindow = defaultWindow

    init(role: Role, settings: HTTP2Settings) {
        self.role = role
        self.settings = settings.clamped
        decoder = HTTP2FrameDecoder(start: role == .client ? .serverPreface : .clientPreface)
        hpack.maxHeaderListSize = self.settings.maxHeaderListSize
    }

    /// This side's SETTINGS, as its first frame; a client writes the preface before it.
    mutating func start() -> [UInt8] {
        unacknowledged.append(settings)
        let frame = HTTP2FrameEncoder.encode(settings.frame)
        return role == .client ? HTTP2FrameDecoder.clientPreface + frame : frame
    }

    func state(of streamID: UInt32) -> HTTP2StreamState {
        if let stream = streams[streamID] { return stream.state }
        return streamID % 2 == 1 && streamID <= lastOpenedStreamID ? .closed : .idle
    }

    var isAwaitingSettingsAcknowledgement: Bool { !unacknowledged.isEmpty }

    /// Opens a stream, from this side's HEADERS (client) or the peer's (server); `state` is what it is after them.
    mutating func open(_ id: UInt32, _ state: HTTP2StreamState) {
        lastOpenedStreamID = max(lastOpenedStreamID, id)
        streams[id] = Stream(state: state, sendWindow: peerInitialWindow, receiveWindow: receiveInitialWindow)
    }

    /// The bytes of a header list on one stream: HEADERS, and CONTINUATION frames when the peer's frame size needs them.
    mutating func headerBytes(streamID: UInt32, _ headers: [HPACKHeader], endStream: Bool) -> [UInt8] {
        let block = encoder.encode(headers)
        var bytes: [UInt8] = []
        if block.count <= peerMaxFrameSize {
            // One HEADERS frame, written without making an `HTTP2Frame` of it (which copies the block twice).
            bytes.reserveCapacity(9 + block.count)
            HTTP2FrameEncoder.appendHead(length: block.count, type: 0x1, flags: endStream ? 0x5 : 0x4, stream: streamID, into: &bytes)
            bytes += block
            return bytes
        }
        let frames = HTTP2FrameEncoder.headerFrames(streamID: streamID, block: block, endStream: endStream, maxFrameSize: peerMaxFrameSize)
        for frame in frames { HTTP2FrameEncoder.encode(frame, into: &bytes) }
        return bytes
    }

    /// Queues body bytes on an open stream and writes what the windows allow now.
    mutating func queue(_ data: [UInt8], on id: UInt32, endStream: Bool) -> [HTTP2Action] {
        streams[id]?.pending += data
        streams[id]?.pendingEndStream = endStream
        return flush()
    }

    /// Marks the stream sent-to-the-end after HEADERS with END_STREAM and no body.
    mutating func localEnded(_ id: UInt32) {
        guard let state = streams[id]?.state else { return }
        if state == .halfClosedRemote { streams[id] = nil } else { streams[id]!.state = .halfClosedLocal }
    }

    mutating func resetStream(_ id: UInt32, code: HTTP2ErrorCode) -> [HTTP2Action] {
        guard failed == nil, streams.removeValue(forKey: id) != nil else { return [] }
        rememberReset(id)
        return [.write(HTTP2FrameEncoder.encode(.rstStream(streamID: id, code)))]
    }

    /// Writes GOAWAY once: streams above `lastStreamID` will not be processed, streams at or below it run to their end.
    mutating func goAway(lastStreamID: UInt32, code: HTTP2ErrorCode) -> [HTTP2Action] {
        guard failed == nil, !closing else { return [] }
        closing = true
        return [.write(HTTP2FrameEncoder.encode(.goAway(lastStreamID: lastStreamID, code)))]
    }

    mutating func settingsTimedOut() -> [HTTP2Action] {
        var actions: [HTTP2Action] = []
        fail(.settingsTimeout, "SETTINGS not acknowledged in time", into: &actions)
        return actions
    }

    /// Bytes read from the socket: the actions they call for, in order.
    mutating func received(_ bytes: some Collection<UInt8>) -> [HTTP2Action] {
        feed(bytes)
        var actions: [HTTP2Action] = []
        while nextFrame(into: &actions) {}
        return actions
    }

    /// Bytes read from the socket, for an owner that takes their frames one at a time with ``nextFrame()``.
    mutating func feed(_ bytes: some Collection<UInt8>) {
        if failed == nil { decoder.feed(bytes) }
    }

    /// The actions the next complete frame calls for, or nil when no frame is complete or the connection failed.
    ///
    /// An owner that acts on a frame's actions before the next frame is read (the server resets a malformed request's
    /// stream) takes them one frame at a time, so later frames on that stream meet the reset whether they came in
    /// the same read or another.
    mutating func nextFrame() -> [HTTP2Action]? {
        var actions: [HTTP2Action] = []
        return nextFrame(into: &actions) ? actions : nil
    }

    /// Appends the actions the next complete frame calls for; false when no frame is complete or the connection failed.
    ///
    /// One array for all the frames of a read: an array per frame cost an allocation each.
    private mutating func nextFrame(into actions: inout [HTTP2Action]) -> Bool {
        guard failed == nil else { return false }
        do throws(HTTP2FrameError) {
            guard case .frame(let frame) = try decoder.next() else { return false }
            handle(frame, into: &actions)
        } catch {
            fail(error.code, error.description, into: &actions)
        }
        return true
    }

    // MARK: - Frames from the peer

    private mutating func handle(_ frame: HTTP2Frame, into actions: inout [HTTP2Action]) {
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
            // A client's GOAWAY names the last stream the server opened (none: push is off), so it ends no request.
            guard role == .client else { return }
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

    private mutating func applySettings(_ values: [HTTP2Setting], into actions: inout [HTTP2Action]) {
        for setting in values {
            let value = Int(setting.value)
            switch setting.id {
            case .headerTableSize: encoder.setMaxTableSize(min(value, 4096))
            case .enablePush where value != 0 && role == .client:
                return fail(.protocolError, "server sent SETTINGS_ENABLE_PUSH 1", into: &actions)
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
        decoder.maxFrameSize = acknowledged.maxFrameSize
        hpack.setMaxTableSize(acknowledged.headerTableSize)
        let delta = acknowledged.initialWindowSize - receiveInitialWindow
        receiveInitialWindow = acknowledged.initialWindowSize
        for id in streams.keys { streams[id]!.receiveWindow += delta }
    }

    private mutating func windowUpdate(_ id: UInt32, _ increment: Int, into actions: inout [HTTP2Action]) {
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

    private mutating func headersComplete(into actions: inout [HTTP2Action]) {
        guard let block = headerBlock else { return }
        headerBlock = nil
        let id = block.streamID
        let headers: [HPACKHeader]
        do throws(HPACKError) {
            // Decoded whatever the stream's state, so the HPACK table stays in step with the peer's.
            headers = try hpack.decode(block.bytes)
        } catch  where error.reason == .headerListTooLarge {
            if role == .server && id % 2 == 1 && state(of: id) == .idle { open(id, .open) }
            return reset(id, .cancel, into: &actions)
        } catch {
            return fail(.compressionError, error.description, into: &actions)
        }
        switch state(of: id) {
        case .idle where role == .server && id % 2 == 1:
            return opened(id, headers, endStream: block.endStream, into: &actions)
        case .idle: return fail(.protocolError, "HEADERS on stream \(id), which the client never opened", into: &actions)
        case .closed where resetByUs.contains(id): return
        case .closed: return fail(.streamClosed, "HEADERS on closed stream \(id)", into: &actions)
        case .halfClosedRemote: return reset(id, .streamClosed, into: &actions)
        // RFC 9113 §8.1: a request's second header block is its trailers, which end the stream.
        case .open where role == .server && !block.endStream: return reset(id, .protocolError, into: &actions)
        case .open, .halfClosedLocal: break
        }
        actions.append(.headers(streamID: id, headers, endStream: block.endStream))
        if block.endStream { remoteEnded(id) }
    }

    /// A client's HEADERS on a new stream: taken, or refused when this side is going away or has as many streams as
    /// its SETTINGS_MAX_CONCURRENT_STREAMS allows (RFC 9113 §5.1.2).
    private mutating func opened(_ id: UInt32, _ headers: [HPACKHeader], endStream: Bool, into actions: inout [HTTP2Action]) {
        let full = streams.count >= settings.maxConcurrentStreams
        open(id, endStream ? .halfClosedRemote : .open)
        if closing || full { return reset(id, .refusedStream, into: &actions) }
        actions.append(.headers(streamID: id, headers, endStream: endStream))
    }

    private mutating func received(
        _ data: [UInt8], padding: Int?, on id: UInt32, endStream: Bool, into actions: inout [HTTP2Action]
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
    mutating func flush() -> [HTTP2Action] {
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

    /// A stream error (RFC 9113 §5.4.2): RST_STREAM with `code`, reported to the owner.
    mutating func reset(_ id: UInt32, _ code: HTTP2ErrorCode, into actions: inout [HTTP2Action]) {
        streams[id] = nil
        rememberReset(id)
        actions.append(.write(HTTP2FrameEncoder.encode(.rstStream(streamID: id, code))))
        actions.append(.streamReset(streamID: id, code))
    }

    /// A connection error (RFC 9113 §5.4.1): GOAWAY with `code` and the last stream this side took, then close.
    private mutating func fail(_ code: HTTP2ErrorCode, _ detail: String, into actions: inout [HTTP2Action]) {
        guard failed == nil else { return }
        failed = code
        streams = [:]
        let last = role == .server ? lastOpenedStreamID : 0
        actions.append(.write(HTTP2FrameEncoder.encode(.goAway(lastStreamID: last, code, debugData: Array(detail.utf8.prefix(256))))))
        actions.append(.closeConnection(code))
    }
}
