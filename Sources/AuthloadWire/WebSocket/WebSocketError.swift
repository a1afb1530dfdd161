/// Why a WebSocket handshake failed or a connection must be failed, with the close code to send.
///
/// Framing errors point at the offending byte, counted from the first byte the decoder was fed;
/// payload errors (UTF-8, close payloads) count from the start of the message or payload; handshake
/// errors have no offset. Handshake failures never reach a Close frame, so they carry 1006, the
/// code RFC 6455 §7.1.5 reports for a connection that ended without one.
///
/// ```swift
/// do { frame = try decoder.next() } catch {
///     print(error)              // unmasked frame from the client at byte 0: client frames must be masked
///     sendClose(error.closeCode) // 1002
/// }
/// ```
public struct WebSocketError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong, for callers that classify errors (the text is for people).
    public enum Kind: Sendable, Hashable, CaseIterable {
        // Opening handshake, read by the client.
        /// The server answered with a status other than 101.
        case unexpectedStatus
        /// `Upgrade` is missing or is not `websocket`.
        case invalidUpgrade
        /// `Connection` is missing or lacks the `upgrade` token.
        case invalidConnection
        /// `Sec-WebSocket-Accept` is missing or does not match the key.
        case invalidAccept
        /// The server selected an extension that was not offered.
        case unexpectedExtension
        /// The server selected a sub-protocol that was not offered, or more than one.
        case unexpectedProtocol
        // Opening handshake, read by the server.
        /// The request method is not GET.
        case invalidMethod
        /// `Sec-WebSocket-Version` is missing or not 13.
        case unsupportedVersion
        /// `Sec-WebSocket-Key` is missing, repeated, or not base64 of 16 bytes.
        case invalidKey
        // Framing.
        /// An RSV bit is set, but no extension was negotiated to give it a meaning.
        case reservedBits
        /// The opcode is one RFC 6455 reserves (0x3–0x7, 0xB–0xF).
        case reservedOpcode
        /// A control frame has FIN clear.
        case fragmentedControlFrame
        /// A control frame's payload is longer than 125 bytes.
        case controlFrameTooLong
        /// A 64-bit payload length has its most significant bit set.
        case invalidLength
        /// A frame from a client is not masked.
        case unmaskedFrame
        /// A frame from a server is masked.
        case maskedFrame
        /// One frame's payload exceeds the configured limit.
        case frameTooLarge
        /// A message's payloads together exceed the configured limit.
        case messageTooLarge
        // Messages.
        /// A continuation frame arrived with no fragmented message to continue.
        case unexpectedContinuation
        /// A text or binary frame arrived while a fragmented message was still open.
        case interruptedMessage
        /// A text message or close reason is not valid UTF-8.
        case invalidUTF8
        /// A Close payload is one byte long (a code needs two).
        case invalidClosePayload
        /// A Close frame carries a code that must not be sent.
        case invalidCloseCode
    }

    public let kind: Kind
    /// The code to send in the Close frame that fails the connection (1006 for handshake errors).
    public let closeCode: WebSocketCloseCode
    /// Where the offending byte is; see the type's documentation for what it counts from.
    public let offset: Int?
    public let description: String

    init(_ kind: Kind, _ closeCode: WebSocketCloseCode, at offset: Int?, _ description: String) {
        self.kind = kind
        self.closeCode = closeCode
        self.offset = offset
        self.description = description
    }

    /// What a server should answer a refused handshake with: 405, 426 or 400.
    public var suggestedStatus: Int {
        switch kind {
        case .invalidMethod: 405
        case .unsupportedVersion: 426
        default: 400
        }
    }
}

// Factories keep every message in one place, so the wording stays consistent and tests can match it.
extension WebSocketError {
    static func handshake(_ kind: Kind, _ problem: String) -> Self {
        Self(kind, .abnormalClosure, at: nil, "WebSocket handshake failed: \(problem)")
    }

    static func frame(_ kind: Kind, at offset: Int, _ problem: String, code: WebSocketCloseCode = .protocolError) -> Self {
        Self(kind, code, at: offset, "\(problem) at byte \(offset)")
    }

    static func message(_ kind: Kind, _ problem: String, code: WebSocketCloseCode = .protocolError) -> Self {
        Self(kind, code, at: nil, problem)
    }

    static func invalidUTF8(in part: String, at offset: Int) -> Self {
        Self(.invalidUTF8, .invalidPayload, at: offset, "invalid UTF-8 in \(part) at byte \(offset)")
    }

    /// Quotes peer text for a message: at most 64 characters with control characters escaped,
    /// because the text ends up in logs and reports.
    static func quoted(_ text: String) -> String {
        var quoted = "'"
        for scalar in text.unicodeScalars.prefix(64) {
            quoted += scalar.value < 0x20 || scalar.value == 0x7F ? scalar.escaped(asASCII: true) : String(scalar)
        }
        return quoted + (text.unicodeScalars.count > 64 ? "…'" : "'")
    }
}
