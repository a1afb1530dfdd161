import Testing

@testable import AuthloadWire

/// One protocol violation, the side that reads it, and exactly what the codec must say about it.
struct WebSocketViolation: Sendable, CustomTestStringConvertible {
    var name: String
    var bytes: [UInt8]
    var role: WebSocketFrameDecoder.Role = .client
    var maxFrameSize = 16 * 1024 * 1024
    var maxMessageSize = 16 * 1024 * 1024
    var kind: WebSocketError.Kind
    var code: WebSocketCloseCode
    var description: String
    var testDescription: String { name }

    /// Decodes and assembles the bytes with the case's role and limits, in the given pieces.
    func outcome(pieces: [Range<Int>]? = nil) -> WebSocketOutcome {
        decodeWebSocket(bytes, role: role, pieces: pieces, maxFrameSize: maxFrameSize, maxMessageSize: maxMessageSize)
    }

    static func client(_ name: String, _ hex: String, _ kind: WebSocketError.Kind, _ code: WebSocketCloseCode, _ description: String)
        -> Self
    {
        Self(name: name, bytes: hexBytes(hex), kind: kind, code: code, description: description)
    }

    static let hello = "48 65 6c 6c 6f"

    static let all: [WebSocketViolation] =
        [
            // Masking direction
            Self(
                name: "unmasked frame read by a server", bytes: hexBytes("81 05 \(hello)"), role: .server, kind: .unmaskedFrame,
                code: .protocolError, description: "unmasked frame from the client at byte 1"),
            .client(
                "masked frame read by a client", "81 85 37 fa 21 3d 7f 9f 4d 51 58", .maskedFrame, .protocolError,
                "masked frame from the server at byte 1"),
            // Header bits and opcodes
            .client(
                "RSV1 without an extension", "C1 00", .reservedBits, .protocolError,
                "RSV bits 0x4 set without a negotiated extension at byte 0"),
            .client(
                "RSV2 without an extension", "A1 00", .reservedBits, .protocolError,
                "RSV bits 0x2 set without a negotiated extension at byte 0"),
            .client(
                "RSV3 without an extension", "91 00", .reservedBits, .protocolError,
                "RSV bits 0x1 set without a negotiated extension at byte 0"),
            .client("reserved data opcode 0x3", "83 00", .reservedOpcode, .protocolError, "reserved opcode 0x3 at byte 0"),
            .client("reserved data opcode 0x7", "87 00", .reservedOpcode, .protocolError, "reserved opcode 0x7 at byte 0"),
            .client("reserved control opcode 0xB", "8B 00", .reservedOpcode, .protocolError, "reserved opcode 0xB at byte 0"),
            .client("reserved control opcode 0xF", "8F 00", .reservedOpcode, .protocolError, "reserved opcode 0xF at byte 0"),
            // Control frames
            .client(
                "fragmented ping", "09 00", .fragmentedControlFrame, .protocolError,
                "fragmented ping frame: control frames must have FIN set at byte 0"),
            .client(
                "fragmented close", "08 00", .fragmentedControlFrame, .protocolError,
                "fragmented close frame: control frames must have FIN set at byte 0"),
            .client(
                "ping with a 126-byte payload", "89 7E 00 7E", .controlFrameTooLong, .protocolError,
                "ping frame longer than 125 bytes at byte 1"),
            .client(
                "close with a 64-bit length", "88 7F 00 00 00 00 00 00 00 02 03 E8", .controlFrameTooLong, .protocolError,
                "close frame longer than 125 bytes at byte 1"),
            // Lengths and limits
            .client(
                "64-bit length with the top bit set", "82 7F 80 00 00 00 00 00 00 00", .invalidLength, .protocolError,
                "64-bit payload length with the most significant bit set at byte 2"),
            .client(
                "2^62-byte frame", "82 7F 40 00 00 00 00 00 00 00", .frameTooLarge, .messageTooBig,
                "frame payload of 4611686018427387904 bytes exceeds the 16777216-byte limit at byte 1"),
            Self(
                name: "frame over a configured limit", bytes: hexBytes("82 7E 00 65"), maxFrameSize: 100, kind: .frameTooLarge,
                code: .messageTooBig, description: "frame payload of 101 bytes exceeds the 100-byte limit at byte 1"),
            Self(
                name: "fragments over the message limit", bytes: hexBytes("02 06 01 02 03 04 05 06 80 05 01 02 03 04 05"),
                maxMessageSize: 10, kind: .messageTooLarge, code: .messageTooBig,
                description: "message of at least 11 bytes exceeds the 10-byte limit at byte 9"),
            Self(
                name: "one frame over the message limit", bytes: hexBytes("81 0B") + Array(repeating: 0x61, count: 11),
                maxMessageSize: 10, kind: .messageTooLarge, code: .messageTooBig,
                description: "message of at least 11 bytes exceeds the 10-byte limit at byte 1"),
            // Fragmentation order
            .client(
                "continuation without a message", "80 02 6c 6f", .unexpectedContinuation, .protocolError,
                "continuation frame without a fragmented message to continue"),
            .client(
                "text frame inside a fragmented text message", "01 03 48 65 6c 81 02 6c 6f", .interruptedMessage, .protocolError,
                "text frame while a fragmented text message is unfinished"),
            .client(
                "binary start inside a fragmented binary message", "02 01 00 02 01 00", .interruptedMessage, .protocolError,
                "binary frame while a fragmented binary message is unfinished"),
            // UTF-8
            .client(
                "invalid UTF-8 in a text message", "81 02 c3 28", .invalidUTF8, .invalidPayload, "invalid UTF-8 in text message at byte 0"),
            .client(
                "a surrogate split across fragments", "01 01 61 00 01 ed 80 02 a0 80", .invalidUTF8, .invalidPayload,
                "invalid UTF-8 in text message at byte 1"),
            .client(
                "a text message ending mid-character", "81 04 61 62 e2 82", .invalidUTF8, .invalidPayload,
                "invalid UTF-8 in text message at byte 2"),
            .client("an overlong encoding", "81 03 61 c0 af", .invalidUTF8, .invalidPayload, "invalid UTF-8 in text message at byte 1"),
            // Close payloads
            .client(
                "one-byte close payload", "88 01 03", .invalidClosePayload, .protocolError,
                "invalid Close payload: 1 byte, but a status code needs 2"),
            .client(
                "invalid UTF-8 in a close reason", "88 05 03 e8 61 ff fe", .invalidUTF8, .invalidPayload,
                "invalid UTF-8 in Close reason at byte 3")
        ]
        + [0, 999, 1004, 1005, 1006, 1015, 1016, 2000, 2999, 5000, 65535].map { (code: UInt16) in
            Self(
                name: "close code \(code)", bytes: [0x88, 0x02, UInt8(code >> 8), UInt8(code & 0xFF)], kind: .invalidCloseCode,
                code: .protocolError, description: "invalid Close code \(WebSocketCloseCode(code)): it must not be sent on the wire")
        }
}

@Suite struct WebSocketViolationTests {
    @Test("fails the connection with the right close code and message", arguments: WebSocketViolation.all)
    func violation(violation: WebSocketViolation) throws {
        let error = try #require(violation.outcome().error)
        #expect(error.kind == violation.kind)
        #expect(error.closeCode == violation.code)
        #expect(error.description == violation.description)
    }

    @Test("reports the same error however the bytes are split", arguments: WebSocketViolation.all)
    func violationSplit(violation: WebSocketViolation) {
        let whole = violation.outcome()
        #expect(violation.outcome(pieces: singleBytePieces(violation.bytes.count)) == whole)
        for split in 0...violation.bytes.count {
            #expect(violation.outcome(pieces: [0..<split, split..<violation.bytes.count]) == whole, "split at \(split)")
        }
    }

    @Test(
        "accepts the close codes that may be sent",
        arguments: [1000, 1001, 1002, 1003, 1007, 1008, 1009, 1010, 1011, 1012, 1013, 1014, 3000, 3999, 4000, 4999] as [UInt16])
    func validCloseCodes(code: UInt16) {
        let outcome = decodeWebSocket([0x88, 0x04, UInt8(code >> 8), UInt8(code & 0xFF), 0x6f, 0x6b])
        #expect(outcome.error == nil)
        #expect(outcome.messages == [.close(code: WebSocketCloseCode(code), reason: "ok")])
    }
}
