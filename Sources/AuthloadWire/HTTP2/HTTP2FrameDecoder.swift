/// Reads HTTP/2 frames (RFC 9113 §4 and §6) from a connection's byte stream, incrementally and without I/O.
///
/// Feed it bytes as the socket delivers them and pull frames until it needs more data. It enforces
/// every rule a frame can break on its own: the connection preface, SETTINGS_MAX_FRAME_SIZE (checked
/// from the 9-byte header, before the payload is buffered), the fixed sizes of PING, SETTINGS,
/// WINDOW_UPDATE, RST_STREAM and PRIORITY, which types need a stream and which must not have one,
/// padding, SETTINGS values, and that a header block's CONTINUATION frames follow it with nothing in
/// between. Rules that need stream state (a DATA frame on a closed stream, window overflows) are the
/// connection's. Frames of unknown types are skipped, as RFC 9113 §4.1 requires.
///
/// A problem is a thrown ``HTTP2FrameError`` with the error code to send in GOAWAY; the decoder keeps
/// throwing it after. Every check needs only the bytes before it, so the result does not depend on
/// how the stream was cut into reads.
///
/// ```swift
/// var decoder = HTTP2FrameDecoder(start: .serverPreface)   // a client reads the server's SETTINGS first
/// decoder.feed(received)
/// while case .frame(let frame) = try decoder.next() { handle(frame) }
/// ```
public struct HTTP2FrameDecoder: Sendable {
    /// What must come before the first frame.
    public enum Start: Sendable, Hashable {
        /// The 24-byte client preface, then a SETTINGS frame: what a server reads.
        case clientPreface
        /// A SETTINGS frame: what a client reads from the server.
        case serverPreface
        /// Nothing: reading starts in the middle of a connection (tests, fuzzing).
        case none
    }

    /// What the decoder has to offer after the bytes fed so far.
    public enum Event: Sendable, Hashable {
        /// No complete frame is buffered; feed more bytes.
        case needMoreData
        case frame(HTTP2Frame)
    }

    /// The 24 bytes a client sends before its first frame (RFC 9113 §3.4).
    public static let clientPreface = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8)
    /// The SETTINGS_MAX_FRAME_SIZE every endpoint must accept until it announces more (RFC 9113 §6.5.2).
    public static let defaultMaxFrameSize = 16_384

    /// Largest payload accepted: this side's SETTINGS_MAX_FRAME_SIZE once the peer has acknowledged it.
    public var maxFrameSize: Int

    private var buffer: [UInt8] = []
    private var readIndex = 0
    /// Stream offset of `buffer[0]`, so errors can name the byte counted from the connection's start.
    private var bufferBase = 0
    private var start: Start
    /// The stream whose header block is open, awaiting CONTINUATION.
    private var headerBlockStream: UInt32?
    private var failure: HTTP2FrameError?

    public init(start: Start, maxFrameSize: Int = HTTP2FrameDecoder.defaultMaxFrameSize) {
        self.start = start
        self.maxFrameSize = min(max(maxFrameSize, Self.defaultMaxFrameSize), 16_777_215)
    }

    /// Appends received bytes.
    public mutating func feed(_ bytes: some Collection<UInt8>) {
        if readIndex > 4096 && readIndex * 2 > buffer.count {
            buffer.removeFirst(readIndex)
            bufferBase += readIndex
            readIndex = 0
        }
        buffer.append(contentsOf: bytes)
    }

    /// Bytes fed but not yet returned as frames.
    public var bufferedByteCount: Int { buffer.count - readIndex }

    /// Returns the next complete frame, or `.needMoreData`.
    ///
    /// - Throws: ``HTTP2FrameError``; the same error again on every later call.
    public mutating func next() throws(HTTP2FrameError) -> Event {
        if let failure { throw failure }
        do {
            while true {
                if start == .clientPreface {
                    guard try readPreface() else { return .needMoreData }
                }
                switch try decodeFrame() {
                case .some(.some(let frame)): return .frame(frame)
                case .some(.none): continue // an unknown type, skipped
                case .none: return .needMoreData
                }
            }
        } catch {
            failure = error
            throw error
        }
    }

    private mutating func readPreface() throws(HTTP2FrameError) -> Bool {
        let preface = Self.clientPreface
        let available = min(buffer.count - readIndex, preface.count)
        for index in 0..<available where buffer[readIndex + index] != preface[index] {
            throw HTTP2FrameError(
                .invalidPreface, .protocolError, at: bufferBase + readIndex + index, "not the HTTP/2 client preface")
        }
        guard available == preface.count else { return false }
        readIndex += preface.count
        start = .serverPreface
        return true
    }

    /// A frame, `.some(nil)` for a skipped frame of unknown type, or nil when more bytes are needed.
    private mutating func decodeFrame() throws(HTTP2FrameError) -> HTTP2Frame?? {
        let base = readIndex
        let offset = bufferBase + base
        guard buffer.count - base >= 9 else { return nil }
        let length = Int(buffer[base]) << 16 | Int(buffer[base + 1]) << 8 | Int(buffer[base + 2])
        let type = buffer[base + 3]
        let flags = buffer[base + 4]
        let streamID = read32(base + 5) & 0x7FFF_FFFF
        guard length <= maxFrameSize else {
            throw HTTP2FrameError(
                .frameTooLarge, .frameSizeError, at: offset, "frame of \(length) bytes over SETTINGS_MAX_FRAME_SIZE \(maxFrameSize)")
        }
        guard buffer.count - base - 9 >= length else { return nil }
        let payload = buffer[(base + 9)..<(base + 9 + length)]
        let frame = try parse(type: type, flags: flags, streamID: streamID, payload: payload, offset: offset)
        readIndex = base + 9 + length

        if start == .serverPreface {
            guard case .settings(false, _) = frame else {
                throw HTTP2FrameError(.missingSettings, .protocolError, at: offset, "first frame is not SETTINGS")
            }
            start = .none
        }
        if let open = headerBlockStream {
            guard case .continuation(open, _, let endHeaders) = frame else {
                throw HTTP2FrameError(
                    .unexpectedFrameInHeaderBlock, .protocolError, at: offset,
                    "frame type \(type) on stream \(streamID) inside the header block of stream \(open)")
            }
            if endHeaders { headerBlockStream = nil }
        } else {
            switch frame {
            case .headers(_, _, _, false, _, _), .pushPromise(_, _, _, false, _): headerBlockStream = streamID
            case .continuation:
                throw HTTP2FrameError(
                    .unexpectedFrameInHeaderBlock, .protocolError, at: offset, "CONTINUATION without an open header block")
            default: break
            }
        }
        return .some(frame)
    }

    private func read32(_ index: Int) -> UInt32 {
        UInt32(buffer[index]) << 24 | UInt32(buffer[index + 1]) << 16 | UInt32(buffer[index + 2]) << 8 | UInt32(buffer[index + 3])
    }

    private func parse(
        type: UInt8, flags: UInt8, streamID: UInt32, payload: ArraySlice<UInt8>, offset: Int
    ) throws(HTTP2FrameError) -> HTTP2Frame? {
        func fail(_ reason: HTTP2FrameError.Reason, _ code: HTTP2ErrorCode, _ detail: String) -> HTTP2FrameError {
            HTTP2FrameError(reason, code, at: offset, detail)
        }
        func needsStream(_ name: String) throws(HTTP2FrameError) {
            guard streamID != 0 else { throw fail(.invalidStreamID, .protocolError, "\(name) on stream 0") }
        }
        func needsConnection(_ name: String) throws(HTTP2FrameError) {
            guard streamID == 0 else { throw fail(.invalidStreamID, .protocolError, "\(name) on stream \(streamID)") }
        }
        func exactLength(_ name: String, _ expected: Int) throws(HTTP2FrameError) {
            guard payload.count == expected else {
                throw fail(.invalidLength, .frameSizeError, "\(name) of \(payload.count) bytes, not \(expected)")
            }
        }
        /// The payload without its padding, and the pad length, when the PADDED flag (0x8) is set.
        func unpadded(_ name: String, fixed: Int) throws(HTTP2FrameError) -> (ArraySlice<UInt8>, Int?) {
            guard flags & 0x8 != 0 else {
                guard payload.count >= fixed else {
                    throw fail(.invalidLength, .frameSizeError, "\(name) of \(payload.count) bytes is too short")
                }
                return (payload, nil)
            }
            guard payload.count >= 1 + fixed else {
                throw fail(.invalidLength, .frameSizeError, "padded \(name) of \(payload.count) bytes is too short")
            }
            let padding = Int(payload[payload.startIndex])
            guard padding < payload.count - fixed else {
                throw fail(.invalidPadding, .protocolError, "\(padding) bytes of padding in a \(payload.count)-byte \(name)")
            }
            return (payload[(payload.startIndex + 1)..<(payload.endIndex - padding)], padding)
        }
        func priority(_ at: Int) -> HTTP2Priority {
            let word = read32(at)
            return HTTP2Priority(exclusive: word & 0x8000_0000 != 0, dependency: word, weight: buffer[at + 4])
        }

        let endStream = flags & 0x1 != 0
        let endHeaders = flags & 0x4 != 0
        switch type {
        case 0x0:
            try needsStream("DATA")
            let (data, padding) = try unpadded("DATA", fixed: 0)
            return .data(streamID: streamID, data: Array(data), endStream: endStream, padding: padding)
        case 0x1:
            try needsStream("HEADERS")
            let hasPriority = flags & 0x20 != 0
            let (body, padding) = try unpadded("HEADERS", fixed: hasPriority ? 5 : 0)
            let fragment = hasPriority ? body.dropFirst(5) : body
            return .headers(
                streamID: streamID, fragment: Array(fragment), endStream: endStream, endHeaders: endHeaders,
                priority: hasPriority ? priority(body.startIndex) : nil, padding: padding)
        case 0x2:
            try needsStream("PRIORITY")
            try exactLength("PRIORITY", 5)
            return .priority(streamID: streamID, priority(payload.startIndex))
        case 0x3:
            try needsStream("RST_STREAM")
            try exactLength("RST_STREAM", 4)
            return .rstStream(streamID: streamID, HTTP2ErrorCode(rawValue: read32(payload.startIndex)))
        case 0x4:
            try needsConnection("SETTINGS")
            let ack = flags & 0x1 != 0
            if ack { try exactLength("SETTINGS ACK", 0) }
            guard payload.count % 6 == 0 else {
                throw fail(.invalidLength, .frameSizeError, "SETTINGS of \(payload.count) bytes, not a multiple of 6")
            }
            var settings: [HTTP2Setting] = []
            for at in stride(from: payload.startIndex, to: payload.endIndex, by: 6) {
                let setting = HTTP2Setting(
                    HTTP2Setting.ID(rawValue: UInt16(buffer[at]) << 8 | UInt16(buffer[at + 1])), read32(at + 2))
                try validate(setting, offset: offset)
                settings.append(setting)
            }
            return .settings(ack: ack, settings)
        case 0x5:
            try needsStream("PUSH_PROMISE")
            let (body, padding) = try unpadded("PUSH_PROMISE", fixed: 4)
            return .pushPromise(
                streamID: streamID, promisedStreamID: read32(body.startIndex) & 0x7FFF_FFFF, fragment: Array(body.dropFirst(4)),
                endHeaders: endHeaders, padding: padding)
        case 0x6:
            try needsConnection("PING")
            try exactLength("PING", 8)
            let data = UInt64(read32(payload.startIndex)) << 32 | UInt64(read32(payload.startIndex + 4))
            return .ping(ack: flags & 0x1 != 0, data: data)
        case 0x7:
            try needsConnection("GOAWAY")
            guard payload.count >= 8 else {
                throw fail(.invalidLength, .frameSizeError, "GOAWAY of \(payload.count) bytes, under 8")
            }
            return .goAway(
                lastStreamID: read32(payload.startIndex) & 0x7FFF_FFFF, HTTP2ErrorCode(rawValue: read32(payload.startIndex + 4)),
                debugData: Array(payload.dropFirst(8)))
        case 0x8:
            try exactLength("WINDOW_UPDATE", 4)
            let increment = read32(payload.startIndex) & 0x7FFF_FFFF
            guard increment != 0 else {
                throw fail(.zeroWindowIncrement, .protocolError, "WINDOW_UPDATE of 0 on stream \(streamID)")
            }
            return .windowUpdate(streamID: streamID, increment: increment)
        case 0x9:
            try needsStream("CONTINUATION")
            return .continuation(streamID: streamID, fragment: Array(payload), endHeaders: endHeaders)
        default:
            return nil
        }
    }

    private func validate(_ setting: HTTP2Setting, offset: Int) throws(HTTP2FrameError) {
        switch setting.id {
        case .enablePush where setting.value > 1:
            throw HTTP2FrameError(.invalidSetting, .protocolError, at: offset, "SETTINGS_ENABLE_PUSH of \(setting.value)")
        case .initialWindowSize where setting.value > 0x7FFF_FFFF:
            throw HTTP2FrameError(
                .invalidSetting, .flowControlError, at: offset, "SETTINGS_INITIAL_WINDOW_SIZE of \(setting.value)")
        case .maxFrameSize where setting.value < 16_384 || setting.value > 16_777_215:
            throw HTTP2FrameError(.invalidSetting, .protocolError, at: offset, "SETTINGS_MAX_FRAME_SIZE of \(setting.value)")
        default:
            break
        }
    }
}
