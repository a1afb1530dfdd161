/// One RFC 6455 frame as a value: header bits, opcode and the payload in the clear.
///
/// The payload is never stored masked. `maskKey` records the key a decoded frame arrived with;
/// the encoder takes the key to send with as a separate argument, so a frame can be re-sent
/// under a fresh key.
///
/// ```swift
/// var out: [UInt8] = []
/// WebSocketFrameEncoder.encode(.text("CONNECT\n\n\0"), maskKey: WebSocketFrameEncoder.randomMaskKey(), into: &out)
/// ```
public struct WebSocketFrame: Sendable, Hashable {
    /// The frame's kind (RFC 6455 §5.2); reserved opcodes never decode, so they have no case.
    public enum Opcode: UInt8, Sendable, Hashable, CaseIterable {
        case continuation = 0x0
        case text = 0x1
        case binary = 0x2
        case close = 0x8
        case ping = 0x9
        case pong = 0xA

        /// Whether this is a control frame (close, ping, pong): at most 125 bytes and never fragmented.
        public var isControl: Bool { rawValue & 0x8 != 0 }
    }

    /// Whether this is the last frame of its message.
    public var fin: Bool
    public var rsv1: Bool
    public var rsv2: Bool
    public var rsv3: Bool
    public var opcode: Opcode
    /// The application data, unmasked.
    public var payload: [UInt8]
    /// The masking key the frame arrived with, as the four key bytes read big-endian; nil if unmasked.
    public var maskKey: UInt32?

    public init(
        fin: Bool = true, rsv1: Bool = false, rsv2: Bool = false, rsv3: Bool = false,
        opcode: Opcode, payload: [UInt8] = [], maskKey: UInt32? = nil
    ) {
        self.fin = fin
        self.rsv1 = rsv1
        self.rsv2 = rsv2
        self.rsv3 = rsv3
        self.opcode = opcode
        self.payload = payload
        self.maskKey = maskKey
    }

    /// A final text frame.
    public static func text(_ text: String) -> Self { Self(opcode: .text, payload: Array(text.utf8)) }

    /// A final binary frame.
    public static func binary(_ bytes: [UInt8]) -> Self { Self(opcode: .binary, payload: bytes) }

    /// A ping; the peer answers with a pong carrying the same bytes.
    public static func ping(_ bytes: [UInt8] = []) -> Self { Self(opcode: .ping, payload: bytes) }

    /// A pong, in answer to a ping or unsolicited as a heartbeat.
    public static func pong(_ bytes: [UInt8] = []) -> Self { Self(opcode: .pong, payload: bytes) }

    /// A Close frame; see ``WebSocketClosePayload/bytes`` for how the code and reason are written.
    public static func close(code: WebSocketCloseCode?, reason: String = "") -> Self {
        Self(opcode: .close, payload: WebSocketClosePayload(code: code, reason: reason).bytes)
    }
}
