/// Why the frame stream from a peer is broken, with the RFC 9113 error code to put in GOAWAY.
///
/// Every such error ends the connection. Some of them (a PRIORITY or RST_STREAM of the wrong length,
/// a zero WINDOW_UPDATE on a stream) are stream errors in RFC 9113, which §5.4.1 lets an endpoint
/// treat as connection errors; a load tester gains nothing by nursing a connection its peer broke.
public struct HTTP2FrameError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong, for callers that classify errors (the text is for people).
    public enum Reason: Sendable, Hashable, CaseIterable {
        /// The 24 bytes of the client connection preface are not `PRI * HTTP/2.0…`.
        case invalidPreface
        /// The first frame after the preface is not a SETTINGS frame without ACK.
        case missingSettings
        /// The length field exceeds SETTINGS_MAX_FRAME_SIZE.
        case frameTooLarge
        /// The payload length is wrong for the frame type, or too short for its fields.
        case invalidLength
        /// A frame that needs a stream has stream 0, or a connection-level frame has a stream.
        case invalidStreamID
        /// The pad length is as long as the payload or longer.
        case invalidPadding
        /// WINDOW_UPDATE with an increment of 0.
        case zeroWindowIncrement
        /// A SETTINGS value out of its range (ENABLE_PUSH above 1, INITIAL_WINDOW_SIZE above 2^31-1, MAX_FRAME_SIZE out of range).
        case invalidSetting
        /// CONTINUATION that follows no open header block, or a header block interrupted by another frame.
        case unexpectedFrameInHeaderBlock
    }

    public let reason: Reason
    /// The code to send in GOAWAY.
    public let code: HTTP2ErrorCode
    /// Offset of the offending frame (or preface byte), counted from the first byte fed.
    public let offset: Int
    public let description: String

    init(_ reason: Reason, _ code: HTTP2ErrorCode, at offset: Int, _ detail: String) {
        self.reason = reason
        self.code = code
        self.offset = offset
        self.description = "\(detail) at byte \(offset) (\(code))"
    }
}
