/// The application data of a Close frame: an optional status code and a UTF-8 reason (RFC 6455 §5.5.1).
///
/// ```swift
/// let close = try WebSocketClosePayload(decoding: frame.payload)  // code 1000, reason "bye"
/// WebSocketClosePayload(code: .goingAway, reason: "restart").bytes // [0x03, 0xE9, 0x72, …]
/// ```
public struct WebSocketClosePayload: Sendable, Hashable {
    /// The status code; nil when the frame had none (reported as 1005 by convention).
    public var code: WebSocketCloseCode?
    /// The reason text; empty when there was none.
    public var reason: String

    public init(code: WebSocketCloseCode?, reason: String = "") {
        self.code = code
        self.reason = reason
    }

    /// Reads a received Close payload.
    ///
    /// - Throws: ``WebSocketError`` with close code 1002 for a one-byte payload or a code that must
    ///   not be sent (see ``WebSocketCloseCode/mayBeSent``), and 1007 for a reason that is not UTF-8.
    ///   Offsets count from the first payload byte.
    public init(decoding payload: [UInt8]) throws(WebSocketError) {
        guard !payload.isEmpty else {
            self.init(code: nil)
            return
        }
        guard payload.count >= 2 else {
            throw WebSocketError(.invalidClosePayload, .protocolError, at: 0, "invalid Close payload: 1 byte, but a status code needs 2")
        }
        let code = WebSocketCloseCode(UInt16(payload[0]) << 8 | UInt16(payload[1]))
        guard code.mayBeSent else {
            throw WebSocketError(.invalidCloseCode, .protocolError, at: 0, "invalid Close code \(code): it must not be sent on the wire")
        }
        let reasonBytes = payload[2...]
        guard let reason = String(validating: reasonBytes, as: UTF8.self) else {
            throw .invalidUTF8(in: "Close reason", at: 2 + UTF8Validation.firstInvalidOffset(in: reasonBytes))
        }
        self.init(code: code, reason: reason)
    }

    /// The payload to send: two code bytes and the reason, or nothing.
    ///
    /// A control frame holds at most 125 bytes, so the reason is cut to 123 bytes at a character
    /// boundary. Without a code, or with one that must not be sent (1005, 1006, 1015, …), the payload
    /// is empty, because RFC 6455 allows a reason only after a code; the peer then reports 1005.
    public var bytes: [UInt8] {
        guard let code, code.mayBeSent else { return [] }
        var bytes = [UInt8(code.rawValue >> 8), UInt8(code.rawValue & 0xFF)]
        var length = 0
        for scalar in reason.unicodeScalars {
            let width = UTF8.width(scalar)
            guard length + width <= 123 else { break }
            length += width
        }
        bytes.append(contentsOf: reason.utf8.prefix(length))
        return bytes
    }
}

/// Locating the first byte that breaks UTF-8, for error messages.
enum UTF8Validation {
    /// The offset (from the start of `bytes`) of the first byte of the first invalid sequence, or `bytes.count`.
    static func firstInvalidOffset(in bytes: some Collection<UInt8>) -> Int {
        var parser = Unicode.UTF8.ForwardParser()
        var iterator = bytes.makeIterator()
        var offset = 0
        while true {
            switch parser.parseScalar(from: &iterator) {
            case .valid(let encoded): offset += encoded.count
            case .emptyInput, .error: return offset
            }
        }
    }
}
