import AuthloadCore
import Testing

@testable import AuthloadWire

@Suite struct WebSocketFrameEncoderTests {
    @Test(
        "writes the RFC 6455 §5.7 examples byte for byte",
        arguments: [
            (WebSocketFrame.text("Hello"), nil, "81 05 48 65 6c 6c 6f"),
            (WebSocketFrame.text("Hello"), 0x37FA_213D, "81 85 37 fa 21 3d 7f 9f 4d 51 58"),
            (WebSocketFrame(fin: false, opcode: .text, payload: Array("Hel".utf8)), nil, "01 03 48 65 6c"),
            (WebSocketFrame(opcode: .continuation, payload: Array("lo".utf8)), nil, "80 02 6c 6f"),
            (WebSocketFrame.ping(Array("Hello".utf8)), nil, "89 05 48 65 6c 6c 6f"),
            (WebSocketFrame.pong(Array("Hello".utf8)), 0x37FA_213D, "8a 85 37 fa 21 3d 7f 9f 4d 51 58")
        ] as [(WebSocketFrame, UInt32?, String)])
    func rfcExamples(frame: WebSocketFrame, maskKey: UInt32?, hex: String) {
        #expect(WebSocketFrameEncoder.encode(frame, maskKey: maskKey) == hexBytes(hex))
    }

    @Test("writes the 256-byte and 65536-byte RFC examples with 16- and 64-bit lengths")
    func rfcLengthExamples() {
        #expect(WebSocketFrameEncoder.encode(.binary(RFCExample.binary256), maskKey: nil) == hexBytes("82 7E 01 00") + RFCExample.binary256)
        #expect(
            WebSocketFrameEncoder.encode(.binary(RFCExample.binary65536), maskKey: nil)
                == hexBytes("82 7F 00 00 00 00 00 01 00 00") + RFCExample.binary65536)
    }

    @Test(
        "uses the shortest length form at each boundary",
        arguments: [
            (0, "82 00"), (125, "82 7D"), (126, "82 7E 00 7E"), (65535, "82 7E FF FF"), (65536, "82 7F 00 00 00 00 00 01 00 00")
        ])
    func lengthBoundaries(length: Int, header: String) {
        let bytes = WebSocketFrameEncoder.encode(.binary(Array(repeating: 0xAB, count: length)), maskKey: nil)
        #expect(Array(bytes.prefix(hexBytes(header).count)) == hexBytes(header))
        #expect(bytes.count == hexBytes(header).count + length)
        #expect(WebSocketFrameEncoder.headerLength(payloadLength: length, masked: false) == hexBytes(header).count)
        #expect(WebSocketFrameEncoder.headerLength(payloadLength: length, masked: true) == hexBytes(header).count + 4)
    }

    @Test("writes RSV bits and FIN as given, so faults can be injected")
    func headerBits() {
        let frame = WebSocketFrame(fin: false, rsv1: true, rsv2: false, rsv3: true, opcode: .binary)
        #expect(WebSocketFrameEncoder.encode(frame, maskKey: nil) == [0x52, 0x00])
    }

    @Test("appends to what the buffer already holds")
    func appends() {
        var buffer: [UInt8] = [0xEE]
        WebSocketFrameEncoder.encode(.ping(), maskKey: nil, into: &buffer)
        #expect(buffer == [0xEE, 0x89, 0x00])
    }

    @Test(
        "masks and unmasks every length from 0 to 130 and 70000, whatever the alignment",
        arguments: Array(0...130) + [70000])
    func maskingRoundTrip(length: Int) throws {
        var generator = SplitMix64(seed: UInt64(length))
        let payload = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
        for key: UInt32 in [0x37FA_213D, 0, 0xFFFF_FFFF, UInt32.random(in: 0...UInt32.max, using: &generator)] {
            // Prefix bytes shift the payload off word alignment in the buffer.
            var bytes = Array(repeating: UInt8(0), count: length % 7)
            WebSocketFrameEncoder.encode(.binary(payload), maskKey: key, into: &bytes)
            let encoded = Array(bytes.dropFirst(length % 7))

            let headerLength = WebSocketFrameEncoder.headerLength(payloadLength: length, masked: true)
            let keyBytes = Array(encoded[headerLength - 4..<headerLength])
            #expect(keyBytes == [UInt8(key >> 24), UInt8(key >> 16 & 0xFF), UInt8(key >> 8 & 0xFF), UInt8(key & 0xFF)])
            // Byte-wise reference for RFC 6455 §5.3: transformed[i] = original[i] XOR key[i mod 4].
            let reference = payload.enumerated().map { $0.element ^ keyBytes[$0.offset % 4] }
            #expect(Array(encoded[headerLength...]) == reference)

            let outcome = decodeWebSocket(encoded, role: .server)
            #expect(outcome.error == nil)
            let frame = try #require(outcome.frames.first)
            #expect(frame.payload == payload)
            #expect(frame.maskKey == key)
        }
    }

    @Test("draws a different random mask key for each frame")
    func randomMaskKeys() {
        let keys = Set((0..<64).map { _ in WebSocketFrameEncoder.randomMaskKey() })
        #expect(keys.count > 60)
    }
}
