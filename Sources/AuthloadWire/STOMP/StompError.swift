/// Why bytes could not be read as a STOMP 1.2 frame, and where reading stopped.
///
/// Offsets count from the first byte of the frame being read (after any heart-beats before it), so with
/// one frame per WebSocket message they are offsets into that message.
///
/// ```swift
/// do { _ = try decoder.next() } catch {
///     print(error)   // undefined escape sequence '\t' at byte 23
///     send(.error(message: "malformed frame", body: Array(error.description.utf8)))
/// }
/// ```
public struct StompError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong, for callers that classify errors (the text is for people).
    public enum Kind: Sendable, Hashable, CaseIterable {
        /// The command line is not one of the fifteen STOMP 1.2 commands.
        case unknownCommand
        /// A CR is not followed by LF; STOMP allows CR only as part of a CRLF line ending.
        case invalidLineEnding
        /// A NUL came before the blank line that ends the headers, so the frame has no complete header section.
        case unexpectedNul
        /// A header line has no `:` or an empty name.
        case malformedHeader
        /// A `\` in a header is followed by something other than `r`, `n`, `c` or `\`, or by nothing.
        case invalidEscape
        /// The first `content-length` header is not a decimal number.
        case invalidContentLength
        /// The `content-length` octets of body are not followed by NUL.
        case missingNul
        /// The command line plus headers exceed the configured limit.
        case headerTooLarge
        /// The body exceeds the configured limit, or `content-length` announces one that would.
        case bodyTooLarge
    }

    public let kind: Kind
    /// Where the offending byte is, counted from the first byte of the current frame.
    public let offset: Int
    public let description: String

    init(_ kind: Kind, at offset: Int, _ description: String) {
        self.kind = kind
        self.offset = offset
        self.description = description
    }
}

// Factories keep every message in one place, so the wording stays consistent and tests can match it.
extension StompError {
    static func unknownCommand(_ line: ArraySlice<UInt8>, at offset: Int) -> Self {
        Self(.unknownCommand, at: offset, "unknown command \(quoted(line)) at byte \(offset)")
    }

    static func bareCarriageReturn(at offset: Int) -> Self {
        Self(.invalidLineEnding, at: offset, "CR not followed by LF at byte \(offset)")
    }

    static func unexpectedNul(at offset: Int) -> Self {
        Self(.unexpectedNul, at: offset, "NUL before the end of the header section at byte \(offset)")
    }

    static func header(at offset: Int, _ problem: String) -> Self {
        Self(.malformedHeader, at: offset, "malformed header at byte \(offset): \(problem)")
    }

    static func undefinedEscape(_ sequence: ArraySlice<UInt8>, at offset: Int) -> Self {
        Self(.invalidEscape, at: offset, "undefined escape sequence \(quoted(sequence)) at byte \(offset)")
    }

    static func incompleteEscape(at offset: Int) -> Self {
        Self(.invalidEscape, at: offset, "incomplete escape sequence at byte \(offset): '\\' ends the header name or value")
    }

    static func invalidContentLength(_ value: String, at offset: Int) -> Self {
        Self(
            .invalidContentLength, at: offset,
            "invalid content-length \(quoted(value.utf8)) at byte \(offset): expected a decimal number of octets")
    }

    static func missingNul(afterBodyOf length: Int, found byte: UInt8, at offset: Int) -> Self {
        Self(
            .missingNul, at: offset, "expected NUL after the \(length)-byte body at byte \(offset), found \(quoted(CollectionOfOne(byte)))")
    }

    static func headerTooLarge(limit: Int, at offset: Int) -> Self {
        Self(.headerTooLarge, at: offset, "header section larger than \(limit) bytes at byte \(offset)")
    }

    static func bodyTooLarge(limit: Int, at offset: Int) -> Self {
        Self(.bodyTooLarge, at: offset, "body larger than \(limit) bytes at byte \(offset)")
    }

    /// Quotes peer bytes for a message: at most 32 of them, with anything unprintable as `\xNN`,
    /// because the text ends up in logs, reports and ERROR frames.
    static func quoted(_ bytes: some Collection<UInt8>) -> String {
        var text = "'"
        for byte in bytes.prefix(32) {
            if byte >= 0x20, byte < 0x7F, byte != 0x27 {
                text.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                text += "\\x" + String(byte >> 4, radix: 16, uppercase: true) + String(byte & 0xF, radix: 16, uppercase: true)
            }
        }
        return text + (bytes.count > 32 ? "…'" : "'")
    }
}
