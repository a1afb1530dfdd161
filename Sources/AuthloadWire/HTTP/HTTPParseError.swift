/// Why bytes could not be read as an HTTP/1.1 message, and where reading stopped.
///
/// Offsets count from the first byte of the message being parsed, so an error in the third
/// pipelined response points into that response, not into the connection.
///
/// ```swift
/// do { _ = try parser.next() } catch {
///     print(error)                 // invalid chunk size at byte 113: 'zz' is not hexadecimal
///     respond(error.suggestedStatus) // 400 on the server side
/// }
/// ```
public struct HTTPParseError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong, for callers that classify errors (the text is for people).
    public enum Kind: Sendable, Hashable, CaseIterable {
        /// The status line or request line does not have the HTTP/1.1 shape.
        case malformedStartLine
        /// The version is not HTTP/1.x.
        case unsupportedVersion
        /// A header or trailer line has a bad name, a bad value byte or no colon.
        case malformedHeader
        /// A header line starts with whitespace; RFC 9112 §5.2 lets recipients reject it, and folding is a smuggling vector.
        case obsoleteLineFolding
        /// `Content-Length` is not a decimal number.
        case invalidContentLength
        /// `Content-Length` appears with different values.
        case conflictingContentLength
        /// `Transfer-Encoding` names a coding this parser cannot decode.
        case unsupportedTransferEncoding
        /// `Transfer-Encoding` is present but the framing it gives is ambiguous.
        case invalidTransferEncoding
        /// A chunk-size line is not hexadecimal or is too long.
        case invalidChunkSize
        /// Chunk data is not followed by CRLF.
        case malformedChunk
        /// The start line plus headers (or the trailers) exceed the configured limit.
        case headerTooLarge
        /// The body exceeds the configured limit.
        case bodyTooLarge
        /// The stream ended in the middle of a message.
        case truncated
        /// An HTTP/1.1 request has no `Host`, or more than one.
        case invalidHost
    }

    public let kind: Kind
    /// Where the offending byte is, counted from the first byte of the current message.
    public let offset: Int
    public let description: String
    /// The limit a `.headerTooLarge` or `.bodyTooLarge` message passed, for a caller that reports it without
    /// reading the text.
    public let limit: Int?
    /// A `.truncated` message ended inside a body whose length `Content-Length` gave: it is short, not cut off in
    /// its head or its chunks.
    public let endedInsideContentLength: Bool

    init(_ kind: Kind, at offset: Int, _ description: String, limit: Int? = nil, endedInsideContentLength: Bool = false) {
        self.kind = kind
        self.offset = offset
        self.description = description
        self.limit = limit
        self.endedInsideContentLength = endedInsideContentLength
    }

    /// What a server should answer with before closing the connection: 400, 413, 431, 501 or 505.
    public var suggestedStatus: Int {
        switch kind {
        case .headerTooLarge: 431
        case .bodyTooLarge: 413
        case .unsupportedTransferEncoding: 501
        case .unsupportedVersion: 505
        default: 400
        }
    }
}

// Factories keep every message in one place, so the wording stays consistent and tests can match it.
extension HTTPParseError {
    static func startLine(_ line: StartLine, at offset: Int, expected: String) -> Self {
        Self(.malformedStartLine, at: offset, "malformed \(line.rawValue) at byte \(offset): expected \(expected)")
    }

    static func unsupportedVersion(_ version: ArraySlice<UInt8>, at offset: Int) -> Self {
        Self(.unsupportedVersion, at: offset, "unsupported HTTP version \(quoted(version)) at byte \(offset)")
    }

    static func header(at offset: Int, _ problem: String) -> Self {
        Self(.malformedHeader, at: offset, "malformed header field at byte \(offset): \(problem)")
    }

    static func obsoleteLineFolding(at offset: Int) -> Self {
        Self(.obsoleteLineFolding, at: offset, "obsolete line folding at byte \(offset): header lines must not start with whitespace")
    }

    static func contentLengthNotANumber(_ value: ArraySlice<UInt8>, at offset: Int) -> Self {
        Self(.invalidContentLength, at: offset, "Content-Length \(quoted(value)) at byte \(offset) is not a number")
    }

    static func conflictingContentLength(_ first: Int, _ second: Int, at offset: Int) -> Self {
        Self(.conflictingContentLength, at: offset, "conflicting Content-Length values '\(first)' and '\(second)' at byte \(offset)")
    }

    static func unsupportedTransferCoding(_ coding: ArraySlice<UInt8>, at offset: Int) -> Self {
        Self(.unsupportedTransferEncoding, at: offset, "unsupported transfer coding \(quoted(coding)) at byte \(offset)")
    }

    static func transferEncoding(at offset: Int, _ problem: String) -> Self {
        Self(.invalidTransferEncoding, at: offset, "invalid Transfer-Encoding at byte \(offset): \(problem)")
    }

    static func chunkSize(at offset: Int, _ problem: String) -> Self {
        Self(.invalidChunkSize, at: offset, "invalid chunk size at byte \(offset): \(problem)")
    }

    static func chunk(at offset: Int, _ problem: String) -> Self {
        Self(.malformedChunk, at: offset, "malformed chunk at byte \(offset): \(problem)")
    }

    static func headerTooLarge(_ section: String, limit: Int, at offset: Int) -> Self {
        Self(.headerTooLarge, at: offset, "\(section) larger than \(limit) bytes at byte \(offset)", limit: limit)
    }

    static func bodyTooLarge(limit: Int, at offset: Int) -> Self {
        Self(.bodyTooLarge, at: offset, "body larger than \(limit) bytes at byte \(offset)", limit: limit)
    }

    static func truncated(at offset: Int, _ state: String, insideContentLength: Bool = false) -> Self {
        Self(
            .truncated, at: offset, "stream ended mid-message at byte \(offset): \(state)", endedInsideContentLength: insideContentLength)
    }

    static func host(at offset: Int, _ problem: String) -> Self {
        Self(.invalidHost, at: offset, "\(problem) at byte \(offset)")
    }

    enum StartLine: String {
        case status = "status line"
        case request = "request line"
    }

    /// Quotes peer bytes for a message: at most 32 of them, with anything unprintable escaped,
    /// because the text ends up in logs and reports.
    static func quoted(_ bytes: ArraySlice<UInt8>) -> String {
        var text = "'"
        for byte in bytes.prefix(32) {
            if byte >= 0x20, byte < 0x7F, byte != 0x27, byte != 0x5C {
                text.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                text += "\\x"
                text.unicodeScalars.append(Unicode.Scalar(ASCII.hexDigit(byte >> 4)))
                text.unicodeScalars.append(Unicode.Scalar(ASCII.hexDigit(byte & 0xF)))
            }
        }
        return text + (bytes.count > 32 ? "…'" : "'")
    }
}
