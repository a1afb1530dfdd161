/// Joins decoded frames into messages: fragments into whole text or binary messages, control frames as they come.
///
/// Control frames may arrive between the fragments of a message (RFC 6455 §5.4) and come out at
/// once, so a ping is answered while a long message is still arriving. Text is checked as UTF-8 when
/// its message is complete. Frames are expected from ``WebSocketFrameDecoder``, which has already
/// checked control-frame sizes, RSV bits and message size. After an error the assembler keeps throwing it.
///
/// ```swift
/// var assembler = WebSocketMessageAssembler()
/// while case .frame(let frame) = try decoder.next() {
///     switch try assembler.append(frame) {
///     case .text(let text)?: handle(text)
///     case .ping(let data)?: send(.pong(data))
///     case .close(let code, _)?: send(.close(code: code ?? .normalClosure))
///     default: break
///     }
/// }
/// ```
public struct WebSocketMessageAssembler: Sendable {
    /// A complete message or a control frame's content.
    public enum Message: Sendable, Hashable {
        case text(String)
        case binary([UInt8])
        case ping([UInt8])
        case pong([UInt8])
        /// A Close frame; `code` is nil when it carried none (report 1005), and `reason` may be empty.
        case close(code: WebSocketCloseCode?, reason: String)
    }

    /// The opcode of the fragmented message still open, if any.
    private var openOpcode: WebSocketFrame.Opcode?
    private var fragments: [UInt8] = []
    private var failure: WebSocketError?

    public init() {}

    /// Whether a fragmented message has started and not yet finished.
    public var isAssembling: Bool { openOpcode != nil }

    /// Bytes of memory held for the fragments of the message still open; none between messages.
    public var retainedCapacity: Int { fragments.capacity }

    /// Takes the next frame and returns a message when one is complete, nil while fragments are pending.
    ///
    /// - Throws: ``WebSocketError``: 1002 for a continuation with nothing to continue, a new text or
    ///   binary frame inside an open message, or a bad Close payload; 1007 for text or a close reason
    ///   that is not UTF-8. The same error again on every later call.
    public mutating func append(_ frame: WebSocketFrame) throws(WebSocketError) -> Message? {
        if let failure { throw failure }
        do {
            return try assemble(frame)
        } catch {
            failure = error
            fragments = []
            throw error
        }
    }

    private mutating func assemble(_ frame: WebSocketFrame) throws(WebSocketError) -> Message? {
        switch frame.opcode {
        case .ping:
            return .ping(frame.payload)
        case .pong:
            return .pong(frame.payload)
        case .close:
            let close = try WebSocketClosePayload(decoding: frame.payload)
            return .close(code: close.code, reason: close.reason)
        case .text, .binary:
            if let openOpcode {
                throw .message(.interruptedMessage, "\(frame.opcode) frame while a fragmented \(openOpcode) message is unfinished")
            }
            guard frame.fin else {
                openOpcode = frame.opcode
                fragments = frame.payload
                return nil
            }
            return try message(frame.opcode, frame.payload)
        case .continuation:
            guard let openOpcode else {
                throw .message(.unexpectedContinuation, "continuation frame without a fragmented message to continue")
            }
            fragments.append(contentsOf: frame.payload)
            guard frame.fin else { return nil }
            let payload = fragments
            fragments = []
            self.openOpcode = nil
            return try message(openOpcode, payload)
        }
    }

    private func message(_ opcode: WebSocketFrame.Opcode, _ payload: [UInt8]) throws(WebSocketError) -> Message {
        guard opcode == .text else { return .binary(payload) }
        guard let text = String(validating: payload, as: UTF8.self) else {
            throw .invalidUTF8(in: "text message", at: UTF8Validation.firstInvalidOffset(in: payload))
        }
        return .text(text)
    }
}
