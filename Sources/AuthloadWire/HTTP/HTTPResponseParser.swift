import AuthloadCore

/// Reads HTTP/1.1 responses from a client connection's byte stream, incrementally and without I/O.
///
/// Tell it which method each request used, feed it bytes as the socket delivers them, and pull
/// responses until it needs more data. Bytes past the end of one response stay buffered for the next,
/// so pipelined responses come out one after another. Nothing a server sends can crash it: every
/// problem is a thrown ``HTTPParseError``, after which the parser keeps throwing that error.
///
/// ```swift
/// var parser = HTTPResponseParser()
/// parser.expectResponse(toMethod: "GET")
/// parser.feed(received)                      // an UnsafeRawBufferPointer or a [UInt8]
/// while case .response(let response, let keepAlive) = try parser.next() {
///     deliver(response, reuse: keepAlive)
/// }
/// ```
public struct HTTPResponseParser: Sendable {
    /// What the parser has to offer after the bytes fed so far.
    public enum Event: Sendable, Hashable {
        /// No complete response is buffered; feed more bytes (or call ``HTTPResponseParser/endOfStream()``).
        case needMoreData
        /// A complete response; `keepAlive` says whether the connection may carry another request.
        case response(HTTPResponse, keepAlive: Bool)
        /// The peer closed the stream cleanly between responses; nothing more will come.
        case endOfStream
    }

    /// Which request a response answers, because HEAD and CONNECT change whether it has a body.
    private enum Expectation: Sendable {
        case ordinary
        case head
        case connect
    }

    private enum Phase: Sendable {
        case statusLine
        case headers
        case body(keepAlive: Bool)
        case upgraded
    }

    private var decoder: HTTPMessageDecoder
    private var expectations: [Expectation] = []
    private var phase = Phase.statusLine
    private var failure: HTTPParseError?
    private var status = 0
    private var reason = ""
    private var minorVersion = 1

    /// Creates a parser for one connection.
    ///
    /// - Parameters:
    ///   - maxHeaderBytes: Largest status line plus header section (and, separately, trailer section) accepted.
    ///   - maxBodyBytes: Largest body accepted, however it is framed.
    public init(maxHeaderBytes: Int = 64 * 1024, maxBodyBytes: Int = 16 * 1024 * 1024) {
        decoder = HTTPMessageDecoder(maxHeaderBytes: maxHeaderBytes, maxBodyBytes: maxBodyBytes)
    }

    /// Records that a request with `method` was sent; responses are matched to requests in order.
    ///
    /// A response that arrives with no recorded request is read as the answer to a GET.
    public mutating func expectResponse(toMethod method: String) {
        switch method {
        case "HEAD": expectations.append(.head)
        case "CONNECT": expectations.append(.connect)
        default: expectations.append(.ordinary)
        }
    }

    /// Requests recorded with ``expectResponse(toMethod:)`` whose responses have not been returned yet.
    public var pendingResponseCount: Int { expectations.count }

    /// Whether any byte of the response now being read has arrived: the transport's time-to-first-byte hook.
    ///
    /// Check it after each feed: the first time it turns true for a request is that request's first byte.
    /// After a response is returned it is already true if the next response's bytes came in the same read.
    public var hasReceivedBytes: Bool {
        switch phase {
        case .statusLine: decoder.unreadCount > 0
        case .headers, .body: true
        case .upgraded: false
        }
    }

    /// Whether a `101 Switching Protocols` (or a 2xx to CONNECT) has been returned; the bytes after it are not HTTP.
    public var isUpgraded: Bool {
        if case .upgraded = phase { true } else { false }
    }

    /// Buffers bytes received from the peer; this one copy is the only one before the body is assembled.
    public mutating func feed(_ bytes: UnsafeRawBufferPointer) { decoder.append(bytes) }

    /// Buffers bytes received from the peer.
    public mutating func feed(_ bytes: some Collection<UInt8>) { decoder.append(bytes) }

    /// Records that the peer closed the stream; bytes fed afterwards are ignored.
    ///
    /// Call ``next()`` afterwards: it completes a body delimited by the close, returns
    /// ``Event/endOfStream`` between responses, and throws ``HTTPParseError/Kind/truncated`` mid-response.
    public mutating func endOfStream() { decoder.markEndOfStream() }

    /// Every byte fed but not parsed, e.g. the first WebSocket frames that arrived with a `101`.
    public mutating func takeUnparsedBytes() -> [UInt8] { decoder.takeUnparsedBytes() }

    /// Parses as far as the buffered bytes allow and returns the next complete response, if any.
    ///
    /// Interim responses (`100`, `102`, `103`) are skipped. A `101`, or a 2xx to CONNECT, is returned with
    /// `keepAlive: false` and ends HTTP parsing: later calls return ``Event/needMoreData`` and
    /// ``takeUnparsedBytes()`` hands over what follows.
    ///
    /// - Throws: ``HTTPParseError``; the parser is then unusable and the connection should be closed.
    public mutating func next() throws(HTTPParseError) -> Event {
        if let failure { throw failure }
        do throws(HTTPParseError) {
            return try advance()
        } catch {
            failure = error
            throw error
        }
    }

    private mutating func advance() throws(HTTPParseError) -> Event {
        while true {
            switch phase {
            case .statusLine:
                guard let line = try decoder.takeStartLine() else {
                    guard decoder.isAtEndOfStream else { return .needMoreData }
                    if decoder.unreadCount == 0 { return .endOfStream }
                    throw decoder.truncated("expected the rest of the status line")
                }
                try parseStatusLine(line)
                phase = .headers

            case .headers:
                guard let line = try decoder.takeSectionLine(section: "header section") else {
                    if decoder.isAtEndOfStream { throw decoder.truncated("expected the rest of the header section") }
                    return .needMoreData
                }
                if !line.isEmpty {
                    try decoder.parseField(line)
                } else if (100..<200).contains(status), status != 101 {
                    // Interim responses precede the real one and never have a body; the caller only wants the final answer.
                    _ = decoder.finishMessage()
                    phase = .statusLine
                } else {
                    let (framing, keepAlive) = try framing()
                    decoder.beginBody(framing)
                    phase = .body(keepAlive: keepAlive)
                }

            case .body(let keepAlive):
                guard try decoder.readBody() else { return .needMoreData }
                return finishResponse(keepAlive: keepAlive)

            case .upgraded:
                return .needMoreData
            }
        }
    }

    private mutating func finishResponse(keepAlive: Bool) -> Event {
        let (headers, body) = decoder.finishMessage()
        let expectation = expectations.isEmpty ? .ordinary : expectations.removeFirst()
        let response = HTTPResponse(status: status, reason: reason, headers: headers, body: body)
        // After a 101, or a 2xx to CONNECT, the bytes that follow belong to another protocol or a tunnel.
        let switches = status == 101 || (expectation == .connect && (200..<300).contains(status))
        phase = switches ? .upgraded : .statusLine
        return .response(response, keepAlive: keepAlive)
    }

    /// Decides the body framing (RFC 9112 §6.3) and whether the connection can be reused.
    private func framing() throws(HTTPParseError) -> (HTTPMessageDecoder.Framing, keepAlive: Bool) {
        let facts = decoder.facts
        let expectation = expectations.first ?? .ordinary
        var keepAlive =
            minorVersion >= 1
            ? !facts.connectionClose
            : facts.connectionKeepAlive && !facts.connectionClose

        if status == 101 { return (.none, false) }
        if expectation == .connect, (200..<300).contains(status) {
            // The connection is now a tunnel, not an HTTP connection.
            return (.none, false)
        }
        if expectation == .head || status == 204 || status == 304 { return (.none, keepAlive) }

        if facts.hasTransferEncoding {
            // Both framings at once is how responses are split or smuggled: trust Transfer-Encoding, then close.
            // An HTTP/1.0 message with Transfer-Encoding has faulty framing by RFC 9112 §6.1: also close.
            if facts.contentLength != nil || minorVersion == 0 { keepAlive = false }
            return facts.chunkedIsFinal ? (.chunked, keepAlive) : (.untilClose, false)
        }
        if let length = facts.contentLength {
            guard length <= decoder.maxBodyBytes else {
                throw .bodyTooLarge(limit: decoder.maxBodyBytes, at: facts.contentLengthOffset)
            }
            return (length == 0 ? .none : .length(length), keepAlive)
        }
        return (.untilClose, false)
    }

    /// `HTTP/1.x SP 3DIGIT SP reason`; a missing reason (with or without its space) is accepted.
    private mutating func parseStatusLine(_ line: Range<Int>) throws(HTTPParseError) {
        let bytes = decoder.buffer
        let versionEnd = bytes[line].firstIndex(of: ASCII.space) ?? line.upperBound
        minorVersion = try HTTPVersion.minor(bytes, line.lowerBound..<versionEnd, at: decoder.offset(line.lowerBound), in: .status)

        let codeStart = versionEnd + 1
        guard versionEnd < line.upperBound else {
            throw .startLine(.status, at: decoder.offset(versionEnd), expected: "a space after the version")
        }
        guard codeStart + 3 <= line.upperBound,
            let code = HTTPMessageDecoder.decimal(bytes, codeStart..<codeStart + 3), code >= 100
        else {
            throw .startLine(.status, at: decoder.offset(codeStart), expected: "a three-digit status code")
        }
        var reasonStart = codeStart + 3
        if reasonStart < line.upperBound {
            guard bytes[reasonStart] == ASCII.space else {
                throw .startLine(.status, at: decoder.offset(reasonStart), expected: "a space after the status code")
            }
            reasonStart += 1
        }
        for index in reasonStart..<line.upperBound where !ASCII.isFieldValueChar(bytes[index]) {
            throw .startLine(.status, at: decoder.offset(index), expected: "a reason phrase without control characters")
        }
        status = code
        reason = String(decoding: bytes[min(reasonStart, line.upperBound)..<line.upperBound], as: UTF8.self)
    }
}
