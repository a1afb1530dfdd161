import AuthloadCore

/// Reads HTTP/1.1 requests from a server connection's byte stream, incrementally and without I/O.
///
/// Feed it bytes as the socket delivers them and pull requests until it needs more data; pipelined
/// requests come out one after another. Every problem is a thrown ``HTTPParseError`` whose
/// ``HTTPParseError/suggestedStatus`` is the status to answer with before closing.
///
/// ```swift
/// var parser = HTTPRequestParser()
/// parser.feed(received)
/// do {
///     while case .request(let request, let keepAlive) = try parser.next() {
///         respond(to: request, thenClose: !keepAlive)
///     }
/// } catch {
///     respond(status: error.suggestedStatus, thenClose: true)
/// }
/// ```
public struct HTTPRequestParser: Sendable {
    /// What the parser has to offer after the bytes fed so far.
    public enum Event: Sendable, Hashable {
        /// No complete request is buffered; feed more bytes (or call ``HTTPRequestParser/endOfStream()``).
        case needMoreData
        /// A complete request; `keepAlive` says whether the client expects the connection to stay open.
        case request(HTTPRequest, keepAlive: Bool)
        /// The client closed the stream cleanly between requests.
        case endOfStream
    }

    private enum Phase: Sendable {
        case requestLine
        case headers
        case body(keepAlive: Bool)
    }

    private var decoder: HTTPMessageDecoder
    private var phase = Phase.requestLine
    private var failure: HTTPParseError?
    private var method = ""
    private var target = ""
    private var minorVersion = 1

    /// Creates a parser for one connection.
    ///
    /// - Parameters:
    ///   - maxHeaderBytes: Largest request line plus header section (and, separately, trailer section) accepted; 431 beyond.
    ///   - maxBodyBytes: Largest body accepted, however it is framed; 413 beyond.
    public init(maxHeaderBytes: Int = 64 * 1024, maxBodyBytes: Int = 16 * 1024 * 1024) {
        decoder = HTTPMessageDecoder(maxHeaderBytes: maxHeaderBytes, maxBodyBytes: maxBodyBytes)
    }

    /// Whether any byte of the request now being read has arrived, e.g. to time out idle connections only.
    public var hasReceivedBytes: Bool {
        switch phase {
        case .requestLine: decoder.unreadCount > 0
        case .headers, .body: true
        }
    }

    /// Buffers bytes received from the peer; this one copy is the only one before the body is assembled.
    public mutating func feed(_ bytes: UnsafeRawBufferPointer) { decoder.append(bytes) }

    /// Buffers bytes received from the peer.
    public mutating func feed(_ bytes: some Collection<UInt8>) { decoder.append(bytes) }

    /// Records that the client closed the stream; bytes fed afterwards are ignored.
    public mutating func endOfStream() { decoder.markEndOfStream() }

    /// Every byte fed but not parsed, e.g. WebSocket frames after the server answered an upgrade with `101`.
    public mutating func takeUnparsedBytes() -> [UInt8] { decoder.takeUnparsedBytes() }

    /// Parses as far as the buffered bytes allow and returns the next complete request, if any.
    ///
    /// - Throws: ``HTTPParseError``; the parser is then unusable and the connection should be closed
    ///   after answering with the error's ``HTTPParseError/suggestedStatus``.
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
            case .requestLine:
                guard let line = try decoder.takeStartLine() else {
                    guard decoder.isAtEndOfStream else { return .needMoreData }
                    if decoder.unreadCount == 0 { return .endOfStream }
                    throw decoder.truncated("expected the rest of the request line")
                }
                try parseRequestLine(line)
                phase = .headers

            case .headers:
                guard let line = try decoder.takeSectionLine(section: "header section") else {
                    if decoder.isAtEndOfStream { throw decoder.truncated("expected the rest of the header section") }
                    return .needMoreData
                }
                if !line.isEmpty {
                    try decoder.parseField(line)
                } else {
                    let (framing, keepAlive) = try framing(headEnd: decoder.offset(line.lowerBound))
                    decoder.beginBody(framing)
                    phase = .body(keepAlive: keepAlive)
                }

            case .body(let keepAlive):
                guard try decoder.readBody() else { return .needMoreData }
                let (headers, body) = decoder.finishMessage()
                phase = .requestLine
                let request = HTTPRequest(method: method, target: target, headers: headers, body: body)
                return .request(request, keepAlive: keepAlive)
            }
        }
    }

    /// Decides the body framing (RFC 9112 §6.3, request rules) and whether the client wants to keep the connection.
    private func framing(headEnd: Int) throws(HTTPParseError) -> (HTTPMessageDecoder.Framing, keepAlive: Bool) {
        let facts = decoder.facts
        if minorVersion >= 1, facts.hostCount == 0 {
            throw .host(at: headEnd, "missing Host header in an HTTP/1.1 request")
        }
        if facts.hostCount > 1 {
            throw .host(at: facts.duplicateHostOffset, "more than one Host header")
        }
        var keepAlive =
            minorVersion >= 1
            ? !facts.connectionClose
            : facts.connectionKeepAlive && !facts.connectionClose

        if facts.hasTransferEncoding {
            let at = facts.transferEncodingOffset
            // RFC 9112 §6.1: each of these leaves the body length ambiguous, which is how requests are smuggled.
            if facts.contentLength != nil {
                throw .transferEncoding(at: at, "both Transfer-Encoding and Content-Length are present")
            }
            if facts.chunkedSeen, !facts.chunkedIsFinal {
                throw .transferEncoding(at: at, "chunked must be the final coding")
            }
            if facts.chunkedRepeated {
                throw .transferEncoding(at: at, "chunked is applied more than once")
            }
            if let coding = facts.unsupportedCoding {
                throw .unsupportedTransferCoding(coding[...], at: at)
            }
            if !facts.chunkedSeen {
                throw .transferEncoding(at: at, "no transfer coding is named")
            }
            // An HTTP/1.0 message with Transfer-Encoding has faulty framing: read it, then close.
            if minorVersion == 0 { keepAlive = false }
            return (.chunked, keepAlive)
        }
        if let length = facts.contentLength {
            guard length <= decoder.maxBodyBytes else {
                throw .bodyTooLarge(limit: decoder.maxBodyBytes, at: facts.contentLengthOffset)
            }
            return (length == 0 ? .none : .length(length), keepAlive)
        }
        // A request without either header has no body (RFC 9112 §6.3 rule 7); it is never close-delimited.
        return (.none, keepAlive)
    }

    /// `method SP request-target SP HTTP-version`, with single spaces as RFC 9112 §3 requires.
    private mutating func parseRequestLine(_ line: Range<Int>) throws(HTTPParseError) {
        let bytes = decoder.buffer
        var index = line.lowerBound
        while index < line.upperBound, ASCII.isTokenChar(bytes[index]) { index += 1 }
        guard index > line.lowerBound, index < line.upperBound, bytes[index] == ASCII.space else {
            throw .startLine(.request, at: decoder.offset(index), expected: "a method followed by a space")
        }
        let methodRange = line.lowerBound..<index

        index += 1
        let targetStart = index
        // Only visible ASCII: a client must percent-encode everything else, and we want to see when one does not.
        while index < line.upperBound, bytes[index] > ASCII.space, bytes[index] < 0x7F { index += 1 }
        guard index > targetStart, index < line.upperBound, bytes[index] == ASCII.space else {
            throw .startLine(.request, at: decoder.offset(index), expected: "a request target followed by a space")
        }
        let targetRange = targetStart..<index

        let versionStart = index + 1
        minorVersion = try HTTPVersion.minor(
            bytes, versionStart..<line.upperBound, at: decoder.offset(versionStart), in: .request
        )
        method = String(decoding: bytes[methodRange], as: UTF8.self)
        target = String(decoding: bytes[targetRange], as: UTF8.self)
    }
}
