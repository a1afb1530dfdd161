import Testing

@testable import AuthloadWire

@Suite struct WebSocketClosePayloadTests {
    @Test(
        "writes a code and reason, and reads them back",
        arguments: [
            (WebSocketCloseCode.normalClosure, "", [0x03, 0xE8] as [UInt8]),
            (.goingAway, "bye", [0x03, 0xE9, 0x62, 0x79, 0x65]),
            (4000, "é", [0x0F, 0xA0, 0xC3, 0xA9])
        ])
    func roundTrip(code: WebSocketCloseCode, reason: String, bytes: [UInt8]) throws {
        #expect(WebSocketClosePayload(code: code, reason: reason).bytes == bytes)
        #expect(try WebSocketClosePayload(decoding: bytes) == WebSocketClosePayload(code: code, reason: reason))
    }

    @Test(
        "writes nothing for no code or a code that must not be sent",
        arguments: [nil, .noStatusReceived, .abnormalClosure, .tlsHandshakeFailure] as [WebSocketCloseCode?])
    func emptyPayload(code: WebSocketCloseCode?) throws {
        #expect(WebSocketClosePayload(code: code, reason: "ignored").bytes == [])
        #expect(try WebSocketClosePayload(decoding: []) == WebSocketClosePayload(code: nil))
    }

    @Test("cuts a long reason at a character boundary so the frame stays within 125 bytes")
    func longReason() throws {
        let reason = String(repeating: "a", count: 122) + "€€"
        let bytes = WebSocketClosePayload(code: .policyViolation, reason: reason).bytes
        #expect(bytes.count == 124)
        #expect(try WebSocketClosePayload(decoding: bytes).reason == String(repeating: "a", count: 122))
        #expect(WebSocketFrame.close(code: .policyViolation, reason: String(repeating: "x", count: 500)).payload.count == 125)
    }

    @Test("describes codes by number and name")
    func codeDescriptions() {
        #expect(WebSocketCloseCode.messageTooBig.description == "1009 (message too big)")
        #expect(WebSocketCloseCode(4321).description == "4321")
    }
}
