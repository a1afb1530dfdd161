import AuthloadCore

/// The machinery both parsers share: buffered input, head lines, header fields, limits and body framing.
///
/// Indices into `buffer` stay valid for one call of a parser's `next()`; only `append` moves bytes,
/// so everything that outlives a call (framing facts, offsets) is kept as message offsets.
struct HTTPMessageDecoder: Sendable {
    /// How the end of a body is found, decided once the head is complete.
    enum Framing: Sendable, Equatable {
        case none
        case length(Int)
        case chunked
        case untilClose
    }

    enum BodyState: Sendable, Equatable {
        case length(remaining: Int)
        case chunkSize
        case chunkData(remaining: Int)
        case chunkEnd
        case trailers
        case untilClose
    }

    /// What the header fields say about framing and reuse, noted as they are read so no field is searched twice.
    struct Facts: Sendable {
        var contentLength: Int?
        var contentLengthOffset = 0
        var hasTransferEncoding = false
        var transferEncodingOffset = 0
        var chunkedSeen = false
        var chunkedIsFinal = false
        var chunkedRepeated = false
        var unsupportedCoding: [UInt8]?
        var connectionClose = false
        var connectionKeepAlive = false
        var hostCount = 0
        var duplicateHostOffset = 0
    }

    /// Chunk-size lines carry only a size and extensions nobody uses; a long one is an attack, not data.
    static let maxChunkLineBytes = 4096

    let maxHeaderBytes: Int
    let maxBodyBytes: Int

    private(set) var buffer: [UInt8] = []
    private(set) var readIndex = 0
    /// Where the search for the next LF resumes, so a head fed byte by byte is scanned once, not quadratically.
    private var scanIndex = 0
    /// Stream offset of `buffer[0]`: bytes already dropped from the front.
    private var streamOffset = 0
    /// Stream offset of the current message's first byte.
    private var messageStart = 0
    /// Bytes of the current head (or trailer) section, counted against `maxHeaderBytes`.
    private var sectionBytes = 0
    private(set) var isAtEndOfStream = false

    /// The current message's fields, kept as the bytes they arrived as: most are never read, so no `String` is made here.
    /// Made when the head is complete (``finishFields()``).
    var headers = HTTPHeaders()
    /// Stream offset of the current head's first field line; its bytes stay buffered until the head is complete.
    private var fieldsStart: Int?
    /// Where each of the current head's fields lies, counted from `fieldsStart`.
    private var fieldSpans: [HTTPHeaders.Span] = []
    var facts = Facts()
    var body: [UInt8] = []
    var bodyState = BodyState.untilClose

    init(maxHeaderBytes: Int, maxBodyBytes: Int) {
        // Negative limits would break the `limit - used` arithmetic; zero simply rejects everything.
        self.maxHeaderBytes = max(maxHeaderBytes, 0)
        self.maxBodyBytes = max(maxBodyBytes, 0)
    }

    var unreadCount: Int { buffer.count - readIndex }

    /// The offset of `buffer[index]` from the start of the current message, as error messages report it.
    func offset(_ index: Int) -> Int { streamOffset + index - messageStart }

    // MARK: Input

    mutating func append(_ bytes: UnsafeRawBufferPointer) {
        guard !isAtEndOfStream, !bytes.isEmpty else { return }
        compact()
        // Rebinding gives the typed buffer whose bulk copy is a memcpy.
        bytes.withMemoryRebound(to: UInt8.self) { buffer.append(contentsOf: $0) }
    }

    mutating func append(_ bytes: some Collection<UInt8>) {
        guard !isAtEndOfStream, !bytes.isEmpty else { return }
        compact()
        buffer.append(contentsOf: bytes)
    }

    mutating func markEndOfStream() { isAtEndOfStream = true }

    /// Hands over every byte not yet parsed, e.g. the first WebSocket frames after a `101`.
    mutating func takeUnparsedBytes() -> [UInt8] {
        let rest = Array(buffer[readIndex...])
        streamOffset += buffer.count
        buffer = []
        readIndex = 0
        scanIndex = 0
        return rest
    }

    /// Drops consumed bytes, but only when cheap: when nothing is left, or the consumed prefix is
    /// large and at least half the buffer, so each byte is moved at most about once. The fields of a head
    /// not yet complete stay: they are copied out in one go when it is.
    private mutating func compact() {
        let droppable = fieldsStart.map { min(readIndex, $0 - streamOffset) } ?? readIndex
        guard droppable > 0 else { return }
        if droppable == buffer.count {
            streamOffset += droppable
            // A buffer that once held a huge read should not stay that big for the connection's life.
            if buffer.capacity > 1 << 20 { buffer = [] } else { buffer.removeAll(keepingCapacity: true) }
            readIndex = 0
            scanIndex = 0
        } else if droppable >= 4096, droppable >= buffer.count / 2 {
            streamOffset += droppable
            buffer.removeSubrange(0..<droppable)
            scanIndex -= droppable
            readIndex -= droppable
        }
    }

    // MARK: Lines

    /// Consumes the start line, skipping empty lines before it (RFC 9112 §2.2 robustness).
    mutating func takeStartLine() throws(HTTPParseError) -> Range<Int>? {
        while let line = try takeSectionLine(section: "header section") {
            guard line.isEmpty else { return line }
            sectionBytes = 0
            messageStart = streamOffset + readIndex
        }
        return nil
    }

    /// Consumes one line of the head or trailer section; the returned range excludes CR LF.
    mutating func takeSectionLine(section: String) throws(HTTPParseError) -> Range<Int>? {
        let allowance = maxHeaderBytes - sectionBytes
        guard
            let (line, length) = try takeLine(
                allowance: allowance,
                tooLong: { [maxHeaderBytes] at throws(HTTPParseError) in
                    throw .headerTooLarge(section, limit: maxHeaderBytes, at: at)
                })
        else { return nil }
        sectionBytes += length
        return line
    }

    /// Starts counting a trailer section against the same limit as the head.
    mutating func beginTrailers() { sectionBytes = 0 }

    /// Consumes the next line if its LF has arrived within `allowance` bytes; `tooLong` throws otherwise.
    mutating func takeLine(
        allowance: Int,
        tooLong: (Int) throws(HTTPParseError) -> Void
    ) throws(HTTPParseError) -> (Range<Int>, length: Int)? {
        let from = max(scanIndex, readIndex)
        guard let lf = ASCII.firstLineFeed(buffer, from: from) else {
            scanIndex = buffer.count
            if unreadCount > allowance { try tooLong(offset(readIndex + allowance)) }
            return nil
        }
        let length = lf + 1 - readIndex
        if length > allowance { try tooLong(offset(readIndex + allowance)) }
        let start = readIndex
        // RFC 9112 §2.2 lets a recipient accept a bare LF; a stray CR elsewhere is rejected by the callers.
        let end = lf > start && buffer[lf - 1] == ASCII.cr ? lf - 1 : lf
        readIndex = lf + 1
        scanIndex = readIndex
        return (start..<end, length)
    }

    mutating func skip(_ count: Int) { readIndex += count }

    // MARK: Fields

    /// Validates one `name: value` line and records it; trailer fields are validated and dropped.
    mutating func parseField(_ line: Range<Int>, isTrailer: Bool = false) throws(HTTPParseError) {
        guard let first = line.first else { return }
        if ASCII.isWhitespace(buffer[first]) { throw .obsoleteLineFolding(at: offset(first)) }
        // Whitespace before the colon stops the name too: RFC 9112 §5.1 requires rejecting it.
        let colon = ASCII.prefixEnd(buffer, first..<line.upperBound, while: ASCII.isTokenChar)
        guard colon < line.upperBound, buffer[colon] == ASCII.colon else {
            throw colon < line.upperBound
                ? .header(at: offset(colon), "invalid character in field name")
                : .header(at: offset(first), "no ':' after the field name")
        }
        guard colon > first else { throw .header(at: offset(first), "empty field name") }
        let name = first..<colon
        let value = ASCII.trimmingWhitespace(buffer, colon + 1..<line.upperBound)
        guard ASCII.allFieldValueBytes(buffer, value) else {
            let invalid = ASCII.prefixEnd(buffer, value, while: ASCII.isFieldValueChar)
            throw .header(at: offset(invalid), "invalid character in field value")
        }
        guard !isTrailer else { return }
        try noteFramingField(name: name, value: value)
        let start: Int
        if let fieldsStart {
            start = fieldsStart - streamOffset
        } else {
            start = first
            fieldsStart = streamOffset + first
            // Room for a typical head's fields in one go (nginx sends about 8), and none for a message without any.
            fieldSpans.reserveCapacity(16)
        }
        fieldSpans.append(
            HTTPHeaders.Span(name: name.lowerBound - start..<colon - start, value: value.lowerBound - start..<value.upperBound - start))
    }

    /// Makes ``headers`` from the head's fields once the head is complete: one copy of the section, from the first
    /// field's name to the last one's value, instead of one per field.
    mutating func finishFields() {
        guard let fieldsStart, let last = fieldSpans.last else { return }
        let start = fieldsStart - streamOffset
        headers = HTTPHeaders(section: Array(buffer[start..<start + last.value.upperBound]), fields: fieldSpans)
        fieldSpans = []
        self.fieldsStart = nil
    }

    private mutating func noteFramingField(name: Range<Int>, value: Range<Int>) throws(HTTPParseError) {
        switch name.count {
        case 4 where ASCII.equalsIgnoringCase(buffer, name, "host"):
            facts.hostCount += 1
            if facts.hostCount == 2 { facts.duplicateHostOffset = offset(name.lowerBound) }
        case 10 where ASCII.equalsIgnoringCase(buffer, name, "connection"):
            noteConnection(value)
        case 14 where ASCII.equalsIgnoringCase(buffer, name, "content-length"):
            try noteContentLength(value, at: offset(name.lowerBound))
        case 17 where ASCII.equalsIgnoringCase(buffer, name, "transfer-encoding"):
            noteTransferEncoding(value, at: offset(name.lowerBound))
        default:
            break
        }
    }

    private mutating func noteConnection(_ value: Range<Int>) {
        let bytes = buffer
        ASCII.forEachListElement(bytes, value) { option in
            if ASCII.equalsIgnoringCase(bytes, option, "close") {
                facts.connectionClose = true
            } else if ASCII.equalsIgnoringCase(bytes, option, "keep-alive") {
                facts.connectionKeepAlive = true
            }
        }
    }

    /// Accepts a list of identical values (`5, 5`), as RFC 9110 §8.6 allows; different values are an error.
    private mutating func noteContentLength(_ value: Range<Int>, at fieldOffset: Int) throws(HTTPParseError) {
        let bytes = buffer
        var sawValue = false
        try ASCII.forEachListElement(bytes, value) { element throws(HTTPParseError) in
            guard let length = Self.decimal(bytes, element) else {
                throw .contentLengthNotANumber(bytes[value], at: fieldOffset)
            }
            if let known = facts.contentLength, known != length {
                throw .conflictingContentLength(known, length, at: fieldOffset)
            }
            facts.contentLength = length
            sawValue = true
        }
        guard sawValue else { throw .contentLengthNotANumber(bytes[value], at: fieldOffset) }
        if facts.contentLengthOffset == 0 { facts.contentLengthOffset = fieldOffset }
    }

    private mutating func noteTransferEncoding(_ value: Range<Int>, at fieldOffset: Int) {
        let bytes = buffer
        if !facts.hasTransferEncoding { facts.transferEncodingOffset = fieldOffset }
        facts.hasTransferEncoding = true
        ASCII.forEachListElement(bytes, value) { coding in
            if ASCII.equalsIgnoringCase(bytes, coding, "chunked") {
                if facts.chunkedSeen { facts.chunkedRepeated = true }
                facts.chunkedSeen = true
                facts.chunkedIsFinal = true
            } else {
                facts.chunkedIsFinal = false
                if facts.unsupportedCoding == nil { facts.unsupportedCoding = Array(bytes[coding]) }
            }
        }
    }

    /// A non-negative decimal; values too long for `Int` saturate, so they fail the body limit instead of overflowing.
    static func decimal(_ bytes: [UInt8], _ range: Range<Int>) -> Int? {
        guard !range.isEmpty else { return nil }
        var value = 0
        for index in range {
            let byte = bytes[index]
            guard ASCII.isDigit(byte) else { return nil }
            let (times10, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times10.addingReportingOverflow(Int(byte - 0x30))
            value = overflow1 || overflow2 ? Int.max : sum
        }
        return value
    }

    // MARK: Messages

    /// Hands out the finished message's headers and body and resets for the next message.
    mutating func finishMessage() -> (headers: HTTPHeaders, body: [UInt8]) {
        let result = (headers, body)
        headers = HTTPHeaders()
        fieldSpans = []
        fieldsStart = nil
        body = []
        facts = Facts()
        sectionBytes = 0
        messageStart = streamOffset + readIndex
        return result
    }

    /// The error for a stream that ended before the current message did.
    func truncated(_ expectation: String, insideContentLength: Bool = false) -> HTTPParseError {
        .truncated(at: offset(buffer.count), expectation, insideContentLength: insideContentLength)
    }
}
