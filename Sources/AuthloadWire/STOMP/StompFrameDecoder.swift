/// Reads STOMP 1.2 frames from one connection's bytes, incrementally and without I/O.
///
/// Feed it each WebSocket message (or any other cut of the stream) and pull events until it needs more
/// data. Several frames in one message come out one after another; a frame cut anywhere across messages
/// comes out once it is complete, identical however it was cut. Nothing a peer sends can crash it: every
/// problem is a thrown ``StompError``, after which the decoder keeps throwing that error.
///
/// Heart-beats: STOMP lets a frame end in any number of EOLs after its NUL, and a heart-beat is also a
/// bare EOL, so on a byte stream the two cannot be told apart. Every EOL (LF or CRLF) outside a frame is
/// therefore reported as ``Event/heartBeat``, one per EOL. Reporting a frame's trailing EOLs as heart-beats
/// costs nothing, since a heart-beat only means "the peer is alive" and the frame just said so; swallowing
/// a real heart-beat that follows a frame would make a healthy peer look dead.
///
/// ```swift
/// var decoder = StompFrameDecoder()
/// decoder.feed(webSocketMessage.payload)
/// loop: while true {
///     switch try decoder.next() {
///     case .frame(let frame): handle(frame)
///     case .heartBeat: peerIsAlive()
///     case .needMoreData: break loop
///     }
/// }
/// ```
public struct StompFrameDecoder: Sendable {
    /// What the decoder has to offer after the bytes fed so far.
    public enum Event: Sendable, Hashable {
        /// A complete frame.
        case frame(StompFrame)
        /// One bare EOL between frames: liveness only, nothing to process.
        case heartBeat
        /// No complete frame or EOL is buffered; feed more bytes.
        case needMoreData
    }

    private enum Phase: Sendable {
        case betweenFrames
        case head(command: StompCommand?)
        case body(command: StompCommand, contentLength: Int?)
    }

    /// Largest command line plus header section accepted, blank line included.
    public let maxHeaderBytes: Int
    /// Largest body accepted, whether framed by `content-length` or by NUL.
    public let maxBodyBytes: Int

    private var buffer: [UInt8] = []
    /// Index of the current frame's first byte, or of the next unread byte between frames; all before it is consumed.
    private var frameStart = 0
    /// Where scanning resumes, so a frame fed byte by byte is scanned once, not quadratically.
    private var cursor = 0
    private var lineStart = 0
    private var bodyStart = 0
    private var phase = Phase.betweenFrames
    private var headers = StompHeaders()
    private var contentLength: Int?
    private var failure: StompError?

    /// Creates a decoder for one connection.
    ///
    /// The defaults fit the small JSON frames of the authload flows with room to spare; a frame past a limit
    /// is an error rather than a reason to buffer without bound.
    ///
    /// - Parameters:
    ///   - maxHeaderBytes: Largest command line plus header section accepted, line endings included.
    ///   - maxBodyBytes: Largest body accepted.
    public init(maxHeaderBytes: Int = 64 * 1024, maxBodyBytes: Int = 1 << 20) {
        // Clamped so `start + limit + 1` cannot overflow; zero is allowed and rejects every frame.
        self.maxHeaderBytes = min(max(maxHeaderBytes, 0), Int.max / 4)
        self.maxBodyBytes = min(max(maxBodyBytes, 0), Int.max / 4)
    }

    /// Bytes fed but not yet returned as an event; non-zero after ``Event/needMoreData`` means a frame
    /// (or a CRLF) is partly received, which is worth knowing when the connection closes.
    public var bufferedByteCount: Int { buffer.count - frameStart }

    /// Bytes of memory the decoder holds for its buffer now: none once every byte fed has been returned as frames.
    public var retainedCapacity: Int { buffer.capacity }

    /// Buffers bytes received from the peer; bytes fed after an error are dropped.
    public mutating func feed(_ bytes: some Sequence<UInt8>) { append(bytes) }

    /// ``feed(_:)`` of a text message's bytes, specialized in this module: from another, the generic one read them
    /// one at a time through `Sequence`'s witnesses (a GCCS flow feeds every status message it receives).
    public mutating func feed(_ bytes: String.UTF8View) {
        // A native string's bytes are copied in one go; through `Sequence` they went one at a time.
        let copied: Void? = bytes.withContiguousStorageIfAvailable { append($0) }
        if copied == nil { append(bytes) }
    }

    /// ``feed(_:)`` of a binary message's bytes, specialized in this module, copied in one go.
    public mutating func feed(_ bytes: [UInt8]) { append(bytes) }

    private mutating func append(_ bytes: some Sequence<UInt8>) {
        guard failure == nil else { return }
        compact()
        buffer.append(contentsOf: bytes)
    }

    /// Decodes as far as the buffered bytes allow and returns the next frame or heart-beat, if any.
    ///
    /// - Throws: ``StompError``; the decoder is then unusable and the connection should be closed
    ///   (a server sends ERROR first).
    public mutating func next() throws(StompError) -> Event {
        if let failure { throw failure }
        do throws(StompError) {
            return try advance()
        } catch {
            failure = error
            throw error
        }
    }

    // MARK: Phases

    private static let lineFeed: UInt8 = 0x0A
    private static let carriageReturn: UInt8 = 0x0D
    private static let colon: UInt8 = 0x3A
    private static let backslash: UInt8 = 0x5C

    private mutating func advance() throws(StompError) -> Event {
        while true {
            switch phase {
            case .betweenFrames:
                guard frameStart < buffer.count else {
                    releaseDrainedBuffer()
                    return .needMoreData
                }
                switch buffer[frameStart] {
                case Self.lineFeed:
                    frameStart += 1
                    return .heartBeat
                case Self.carriageReturn:
                    guard frameStart + 1 < buffer.count else { return .needMoreData }
                    guard buffer[frameStart + 1] == Self.lineFeed else { throw .bareCarriageReturn(at: 0) }
                    frameStart += 2
                    return .heartBeat
                default:
                    cursor = frameStart
                    lineStart = frameStart
                    // Room for the headers of any frame the flows exchange, taken once rather than as they come.
                    headers = StompHeaders(reservingCapacity: 8)
                    contentLength = nil
                    phase = .head(command: nil)
                }
            case .head(let command):
                guard try scanHead(command: command) else { return .needMoreData }
            case .body(let command, let contentLength):
                guard let body = try scanBody(contentLength: contentLength) else { return .needMoreData }
                let frame = StompFrame(command: command, headers: headers, body: Array(buffer[body]))
                frameStart = body.upperBound + 1
                headers = StompHeaders()
                phase = .betweenFrames
                return .frame(frame)
            }
        }
    }

    /// Reads complete lines up to the header limit; true once the blank line ending the headers is read.
    private mutating func scanHead(command: StompCommand?) throws(StompError) -> Bool {
        var command = command
        // Scanning stops at the limit rather than at the end of the buffer, so the same error comes out
        // at the same byte however the frame was cut.
        let end = cursor + min(buffer.count - cursor, maxHeaderBytes - (cursor - frameStart))
        while cursor < end {
            let stop = Self.lineEnd(in: buffer, from: cursor, to: end)
            guard stop < end else {
                cursor = end
                break
            }
            // A NUL here is a truncated frame (e.g. `DISCONNECT\n\0` without the blank line), not a body.
            if buffer[stop] == 0 {
                cursor = stop
                throw .unexpectedNul(at: offset(stop))
            }
            cursor = stop + 1
            let line = lineStart..<stop
            lineStart = cursor
            if let known = command {
                if try takeHeaderLine(line, escaped: known.escapesHeaders) {
                    bodyStart = cursor
                    phase = .body(command: known, contentLength: contentLength)
                    return true
                }
            } else {
                command = try Lines(buffer: buffer, frameStart: frameStart).command(line)
                phase = .head(command: command)
            }
        }
        if cursor - frameStart >= maxHeaderBytes, buffer.count > cursor {
            throw .headerTooLarge(limit: maxHeaderBytes, at: offset(cursor))
        }
        return false
    }

    /// The index of the first LF or NUL in `buffer[start..<end]`, or `end`: a scan through the buffer's storage, which
    /// indexing the array byte by byte, the cursor stored at each, made a third of a status frame's decoding.
    private static func lineEnd(in buffer: [UInt8], from start: Int, to end: Int) -> Int {
        buffer.withUnsafeBufferPointer { bytes in
            var index = start
            while index < end, bytes[index] != lineFeed, bytes[index] != 0 { index += 1 }
            return index
        }
    }

    /// The body's range once it and its NUL are buffered, or nil.
    private mutating func scanBody(contentLength: Int?) throws(StompError) -> Range<Int>? {
        if let contentLength {
            guard buffer.count - bodyStart > contentLength else { return nil }
            let end = bodyStart + contentLength
            guard buffer[end] == 0 else {
                throw .missingNul(afterBodyOf: contentLength, found: buffer[end], at: offset(end))
            }
            return bodyStart..<end
        }
        let end = bodyStart + min(buffer.count - bodyStart, maxBodyBytes + 1)
        if let nul = buffer[cursor..<end].firstIndex(of: 0) { return bodyStart..<nul }
        cursor = end
        if buffer.count - bodyStart > maxBodyBytes {
            throw .bodyTooLarge(limit: maxBodyBytes, at: offset(bodyStart + maxBodyBytes))
        }
        return nil
    }

    // MARK: Lines

    /// The index of the first `byte` in `buffer[range]`, read through the buffer's storage: a frame's every header line
    /// is searched for a CR, a colon and a backslash.
    private static func firstIndex(of byte: UInt8, in buffer: [UInt8], _ range: Range<Int>) -> Int? {
        buffer.withUnsafeBufferPointer { bytes in
            var index = range.lowerBound
            while index < range.upperBound {
                if bytes[index] == byte { return index }
                index += 1
            }
            return nil
        }
    }

    /// Adds one header; true when `line` is the blank line that ends the header section.
    private mutating func takeHeaderLine(_ line: Range<Int>, escaped: Bool) throws(StompError) -> Bool {
        let lines = Lines(buffer: buffer, frameStart: frameStart)
        let content = try lines.content(of: line)
        guard !content.isEmpty else { return true }
        // The first raw colon separates: an escaped name holds `\c` instead, and CONNECT values may hold colons.
        guard let colon = Self.firstIndex(of: Self.colon, in: buffer, content) else {
            throw .header(at: offset(content.lowerBound), "no ':' after the header name")
        }
        guard colon > content.lowerBound else { throw .header(at: offset(colon), "empty header name") }
        let name = try lines.text(content.lowerBound..<colon, unescaping: escaped)
        let value = try lines.text(colon + 1..<content.upperBound, unescaping: escaped)
        // Only the first content-length counts, like every repeated header.
        if name == "content-length", !headers.contains(name) {
            contentLength = try Self.length(value, limit: maxBodyBytes, at: offset(colon + 1))
        }
        headers.append(name, value)
        return false
    }

    /// A `content-length` value as a byte count: plain decimal digits, nothing else (STOMP does not trim values).
    private static func length(_ value: String, limit: Int, at offset: Int) throws(StompError) -> Int {
        guard !value.isEmpty, value.utf8.allSatisfy({ $0 &- 0x30 < 10 }) else {
            throw .invalidContentLength(value, at: offset)
        }
        var length = 0
        for digit in value.utf8 {
            // Past the limit the number is too large whatever follows. The limit may be as large as
            // Int.max / 4, so a number still under it can overflow on the next digit: that is too large too.
            let (times10, overflow1) = length.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times10.addingReportingOverflow(Int(digit - 0x30))
            guard !overflow1, !overflow2, sum <= limit else { throw .bodyTooLarge(limit: limit, at: offset) }
            length = sum
        }
        return length
    }

    // MARK: Buffer

    /// The offset of `buffer[index]` from the first byte of the current frame, as errors report it.
    private func offset(_ index: Int) -> Int { index - frameStart }

    /// Drops consumed bytes, but only when cheap: when nothing is left, or the consumed prefix is
    /// large and at least half the buffer, so each byte is moved at most about once.
    /// Lets go of the buffer once every frame in it is out: a session held open for minutes hears a status every few
    /// seconds, and a buffer kept for the next one would cost it its largest frame's bytes all the while.
    private mutating func releaseDrainedBuffer() {
        guard buffer.capacity > 0 else { return }
        buffer = []
        (frameStart, cursor, lineStart, bodyStart) = (0, 0, 0, 0)
    }

    private mutating func compact() {
        guard frameStart > 0 else { return }
        if frameStart == buffer.count {
            releaseDrainedBuffer()
        } else if frameStart >= 4096, frameStart >= buffer.count / 2 {
            buffer.removeSubrange(0..<frameStart)
            cursor -= frameStart
            lineStart -= frameStart
            bodyStart -= frameStart
            frameStart = 0
        }
    }
}

extension StompFrameDecoder {
    /// The buffer and the current frame's start, which the line readers need: read through this rather than the
    /// decoder, whose 136 bytes a non-mutating method called from a mutating one was handed as a copy (three copies a
    /// header line, a tenth of a status frame's decoding).
    fileprivate struct Lines {
        let buffer: [UInt8]
        let frameStart: Int

        /// The offset of `buffer[index]` from the first byte of the current frame, as errors report it.
        func offset(_ index: Int) -> Int { index - frameStart }

        /// `line` without a final CR; any other CR is an error, as STOMP has no bare CR outside escapes.
        func content(of line: Range<Int>) throws(StompError) -> Range<Int> {
            var content = line
            if !content.isEmpty, buffer[content.upperBound - 1] == StompFrameDecoder.carriageReturn { content = line.dropLast() }
            if let stray = StompFrameDecoder.firstIndex(of: StompFrameDecoder.carriageReturn, in: buffer, content) {
                throw .bareCarriageReturn(at: offset(stray))
            }
            return content
        }

        func command(_ line: Range<Int>) throws(StompError) -> StompCommand {
            let content = try content(of: line)
            guard let command = StompCommand(buffer[content]) else {
                throw .unknownCommand(buffer[content], at: offset(content.lowerBound))
            }
            return command
        }

        /// Header bytes as a string, with STOMP 1.2 escapes undone when `unescaping`.
        ///
        /// Invalid UTF-8 is repaired to U+FFFD rather than rejected: headers here are ASCII in practice,
        /// and a load tester should report a frame it can read rather than fail the connection over it.
        func text(_ range: Range<Int>, unescaping: Bool) throws(StompError) -> String {
            guard unescaping, StompFrameDecoder.firstIndex(of: StompFrameDecoder.backslash, in: buffer, range) != nil else {
                // From the storage: through the slice, the bytes were validated by the generic path.
                return buffer.withUnsafeBufferPointer { String(decoding: UnsafeBufferPointer(rebasing: $0[range]), as: UTF8.self) }
            }
            var bytes: [UInt8] = []
            bytes.reserveCapacity(range.count)
            var index = range.lowerBound
            while index < range.upperBound {
                let byte = buffer[index]
                index += 1
                guard byte == StompFrameDecoder.backslash else {
                    bytes.append(byte)
                    continue
                }
                guard index < range.upperBound else { throw .incompleteEscape(at: offset(index - 1)) }
                switch buffer[index] {
                case UInt8(ascii: "r"): bytes.append(StompFrameDecoder.carriageReturn)
                case UInt8(ascii: "n"): bytes.append(StompFrameDecoder.lineFeed)
                case UInt8(ascii: "c"): bytes.append(StompFrameDecoder.colon)
                case StompFrameDecoder.backslash: bytes.append(StompFrameDecoder.backslash)
                default: throw .undefinedEscape(buffer[index - 1...index], at: offset(index - 1))
                }
                index += 1
            }
            return String(decoding: bytes, as: UTF8.self)
        }
    }
}
