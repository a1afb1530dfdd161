/// Writes HTTP/2 frames (RFC 9113 §4.1 and §6) as bytes for the socket.
///
/// It writes what it is given: keeping payloads within the peer's SETTINGS_MAX_FRAME_SIZE is the
/// caller's job, helped by ``headerFrames(streamID:block:endStream:maxFrameSize:)``, which cuts a
/// header block into HEADERS and CONTINUATION frames.
public enum HTTP2FrameEncoder {
    /// Appends the bytes of `frame` to `output`.
    public static func encode(_ frame: HTTP2Frame, into output: inout [UInt8]) {
        switch frame {
        case .data(let stream, let data, let endStream, let padding):
            padded(0x0, flags: endStream ? 0x1 : 0, stream: stream, body: data, padding: padding, into: &output)
        case .headers(let stream, let fragment, let endStream, let endHeaders, let priority, let padding):
            var flags: UInt8 = (endStream ? 0x1 : 0) | (endHeaders ? 0x4 : 0)
            var body: [UInt8] = []
            if let priority {
                flags |= 0x20
                append(priority, to: &body)
            }
            body += fragment
            padded(0x1, flags: flags, stream: stream, body: body, padding: padding, into: &output)
        case .priority(let stream, let priority):
            var body: [UInt8] = []
            append(priority, to: &body)
            header(0x2, flags: 0, stream: stream, body: body, into: &output)
        case .rstStream(let stream, let code):
            header(0x3, flags: 0, stream: stream, body: be32(code.rawValue), into: &output)
        case .settings(let ack, let settings):
            var body: [UInt8] = []
            for setting in settings {
                body += [UInt8(setting.id.rawValue >> 8), UInt8(truncatingIfNeeded: setting.id.rawValue)]
                body += be32(setting.value)
            }
            header(0x4, flags: ack ? 0x1 : 0, stream: 0, body: body, into: &output)
        case .pushPromise(let stream, let promised, let fragment, let endHeaders, let padding):
            padded(0x5, flags: endHeaders ? 0x4 : 0, stream: stream, body: be32(promised) + fragment, padding: padding, into: &output)
        case .ping(let ack, let data):
            header(
                0x6, flags: ack ? 0x1 : 0, stream: 0, body: be32(UInt32(data >> 32)) + be32(UInt32(truncatingIfNeeded: data)), into: &output
            )
        case .goAway(let last, let code, let debugData):
            header(0x7, flags: 0, stream: 0, body: be32(last) + be32(code.rawValue) + debugData, into: &output)
        case .windowUpdate(let stream, let increment):
            header(0x8, flags: 0, stream: stream, body: be32(increment), into: &output)
        case .continuation(let stream, let fragment, let endHeaders):
            header(0x9, flags: endHeaders ? 0x4 : 0, stream: stream, body: fragment, into: &output)
        }
    }

    /// The bytes of `frame`.
    public static func encode(_ frame: HTTP2Frame) -> [UInt8] {
        var output: [UInt8] = []
        encode(frame, into: &output)
        return output
    }

    /// A header block as one HEADERS frame and as many CONTINUATION frames as `maxFrameSize` requires.
    public static func headerFrames(streamID: UInt32, block: [UInt8], endStream: Bool, maxFrameSize: Int) -> [HTTP2Frame] {
        let size = max(1, maxFrameSize)
        var frames: [HTTP2Frame] = []
        var start = 0
        repeat {
            let end = min(block.count, start + size)
            let fragment = Array(block[start..<end])
            let last = end == block.count
            frames.append(
                frames.isEmpty
                    ? .headers(streamID: streamID, fragment: fragment, endStream: endStream, endHeaders: last)
                    : .continuation(streamID: streamID, fragment: fragment, endHeaders: last))
            start = end
        } while start < block.count
        return frames
    }

    private static func be32(_ value: UInt32) -> [UInt8] {
        [
            UInt8(value >> 24), UInt8(truncatingIfNeeded: value >> 16), UInt8(truncatingIfNeeded: value >> 8),
            UInt8(truncatingIfNeeded: value)
        ]
    }

    private static func append(_ priority: HTTP2Priority, to body: inout [UInt8]) {
        body += be32(priority.dependency & 0x7FFF_FFFF | (priority.exclusive ? 0x8000_0000 : 0))
        body.append(priority.weight)
    }

    private static func padded(
        _ type: UInt8, flags: UInt8, stream: UInt32, body: [UInt8], padding: Int?, into output: inout [UInt8]
    ) {
        guard let padding else { return header(type, flags: flags, stream: stream, body: body, into: &output) }
        let pad = min(max(padding, 0), 255)
        header(type, flags: flags | 0x8, stream: stream, body: [UInt8(pad)] + body + [UInt8](repeating: 0, count: pad), into: &output)
    }

    private static func header(_ type: UInt8, flags: UInt8, stream: UInt32, body: [UInt8], into output: inout [UInt8]) {
        appendHead(length: body.count, type: type, flags: flags, stream: stream, into: &output)
        output += body
    }

    /// Appends the 9-byte frame header (RFC 9113 §4.1) of a frame whose `length` payload bytes the caller appends next.
    static func appendHead(length: Int, type: UInt8, flags: UInt8, stream: UInt32, into output: inout [UInt8]) {
        output.append(UInt8(truncatingIfNeeded: length >> 16))
        output.append(UInt8(truncatingIfNeeded: length >> 8))
        output.append(UInt8(truncatingIfNeeded: length))
        output.append(type)
        output.append(flags)
        let id = stream & 0x7FFF_FFFF
        output.append(UInt8(truncatingIfNeeded: id >> 24))
        output.append(UInt8(truncatingIfNeeded: id >> 16))
        output.append(UInt8(truncatingIfNeeded: id >> 8))
        output.append(UInt8(truncatingIfNeeded: id))
    }
}
