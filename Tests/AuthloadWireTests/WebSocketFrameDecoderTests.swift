import Testing

@testable import AuthloadWire

/// An RFC 6455 §5.7 example: the bytes as printed and what they must decode to.
struct RFCExample: Sendable, CustomTestStringConvertible {
    var name: String
    var bytes: [UInt8]
    /// The reading side: masked examples are client frames, read by a server.
    var role: WebSocketFrameDecoder.Role
    var frames: [WebSocketFrame]
    var messages: [WebSocketMessageAssembler.Message]
    var testDescription: String { name }

    static let hello = Array("Hello".utf8)
    static let binary256 = (0..<256).map { UInt8(truncatingIfNeeded: $0 &* 7) }
    static let binary65536 = (0..<65536).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ $0 >> 8) }

    static let all: [RFCExample] = [
        .init(
            name: "single-frame unmasked text", bytes: hexBytes("81 05 48 65 6c 6c 6f"), role: .client,
            frames: [.text("Hello")], messages: [.text("Hello")]),
        .init(
            name: "single-frame masked text", bytes: hexBytes("81 85 37 fa 21 3d 7f 9f 4d 51 58"), role: .server,
            frames: [WebSocketFrame(opcode: .text, payload: hello, maskKey: 0x37FA_213D)], messages: [.text("Hello")]),
        .init(
            name: "fragmented unmasked text", bytes: hexBytes("01 03 48 65 6c 80 02 6c 6f"), role: .client,
            frames: [
                WebSocketFrame(fin: false, opcode: .text, payload: Array("Hel".utf8)),
                WebSocketFrame(opcode: .continuation, payload: Array("lo".utf8))
            ],
            messages: [.text("Hello")]),
        .init(
            name: "unmasked ping", bytes: hexBytes("89 05 48 65 6c 6c 6f"), role: .client,
            frames: [.ping(hello)], messages: [.ping(hello)]),
        .init(
            name: "masked pong", bytes: hexBytes("8a 85 37 fa 21 3d 7f 9f 4d 51 58"), role: .server,
            frames: [WebSocketFrame(opcode: .pong, payload: hello, maskKey: 0x37FA_213D)], messages: [.pong(hello)]),
        .init(
            name: "256-byte binary with a 16-bit length", bytes: hexBytes("82 7E 01 00") + binary256, role: .client,
            frames: [.binary(binary256)], messages: [.binary(binary256)]),
        .init(
            name: "65536-byte binary with a 64-bit length", bytes: hexBytes("82 7F 00 00 00 00 00 01 00 00") + binary65536,
            role: .client, frames: [.binary(binary65536)], messages: [.binary(binary65536)])
    ]
}

@Suite struct WebSocketFrameDecoderTests {
    @Test("decodes the RFC 6455 §5.7 examples", arguments: RFCExample.all)
    func rfcExamples(example: RFCExample) {
        let outcome = decodeWebSocket(example.bytes, role: example.role)
        #expect(outcome.error == nil)
        #expect(outcome.frames == example.frames)
        #expect(outcome.messages == example.messages)
    }

    @Test("decodes the RFC 6455 §5.7 examples fed one byte at a time", arguments: RFCExample.all)
    func rfcExamplesByteAtATime(example: RFCExample) {
        let outcome = decodeWebSocket(example.bytes, role: example.role, pieces: singleBytePieces(example.bytes.count))
        #expect(outcome == decodeWebSocket(example.bytes, role: example.role))
    }

    @Test(
        "accepts lengths written in a longer form than needed",
        arguments: [
            hexBytes("81 7E 00 05 48 65 6c 6c 6f"),
            hexBytes("81 7F 00 00 00 00 00 00 00 05 48 65 6c 6c 6f")
        ])
    func nonMinimalLengths(bytes: [UInt8]) {
        #expect(decodeWebSocket(bytes).messages == [.text("Hello")])
    }

    @Test("decodes empty frames of every opcode")
    func emptyFrames() {
        let bytes = hexBytes("81 00 82 00 89 00 8A 00 01 00 80 00 88 00")
        let outcome = decodeWebSocket(bytes)
        #expect(outcome.error == nil)
        #expect(outcome.messages == [.text(""), .binary([]), .ping([]), .pong([]), .text(""), .close(code: nil, reason: "")])
    }

    @Test("reports needMoreData until the whole frame is buffered, then returns it and nothing more")
    func needMoreData() throws {
        var decoder = WebSocketFrameDecoder(role: .client)
        #expect(try decoder.next() == .needMoreData)
        decoder.feed(hexBytes("81 05 48 65"))
        #expect(try decoder.next() == .needMoreData)
        #expect(decoder.bufferedByteCount == 4)
        decoder.feed(hexBytes("6c 6c 6f 89"))
        #expect(try decoder.next() == .frame(.text("Hello")))
        #expect(try decoder.next() == .needMoreData)
        #expect(decoder.bufferedByteCount == 1)
    }

    @Test("holds no buffer once a large frame is out, and only the unfinished frame's bytes while one is incomplete")
    func buffersReleased() throws {
        var decoder = WebSocketFrameDecoder(role: .client)
        let large = WebSocketFrame.binary(Array(repeating: 7, count: 100_000))
        let bytes = encodeFrames([large, .text("status")])
        // The large frame whole, and the first 2 bytes of the next one (its header).
        let cut = bytes.count - 6
        decoder.feed(bytes[..<cut])
        #expect(try decoder.next() == .frame(large))
        #expect(try decoder.next() == .needMoreData)
        #expect(decoder.bufferedByteCount == 2)
        #expect(decoder.retainedCapacity < 1000, "the unfinished frame's buffer is sized to what is left, not to the large frame")
        decoder.feed(bytes[cut...])
        #expect(try decoder.next() == .frame(.text("status")))
        #expect(try decoder.next() == .needMoreData)
        #expect(decoder.retainedCapacity == 0, "a held socket between messages keeps no buffer")
    }

    @Test("rejects an oversized frame from its header, before any payload arrives")
    func oversizedFrameRejectedEarly() {
        var decoder = WebSocketFrameDecoder(role: .client, maxFrameSize: 1024)
        decoder.feed(hexBytes("82 7F 00 00 00 01 00 00 00 00"))
        #expect(throws: WebSocketError.self) { try decoder.next() }
        #expect(decoder.bufferedByteCount == 10)
    }

    @Test("keeps throwing the first error, whatever is fed after it")
    func errorsAreSticky() throws {
        var decoder = WebSocketFrameDecoder(role: .client)
        decoder.feed(hexBytes("C1 00"))
        let first = try #require(throws: WebSocketError.self) { try decoder.next() }
        decoder.feed(hexBytes("81 00"))
        let second = try #require(throws: WebSocketError.self) { try decoder.next() }
        #expect(first == second)
    }

    @Test("counts error offsets from the start of the stream, across compactions")
    func offsetsSpanFrames() {
        let frames = Array(repeating: WebSocketFrame.binary(Array(repeating: 7, count: 1000)), count: 10)
        let bytes = encodeFrames(frames) + hexBytes("C2 00")
        let pieces = stride(from: 0, to: bytes.count, by: 333).map { $0..<min($0 + 333, bytes.count) }
        let outcome = decodeWebSocket(bytes, pieces: pieces)
        #expect(outcome.frames == frames)
        #expect(outcome.error?.offset == 10 * 1004)
        #expect(outcome.error?.description == "RSV bits 0x4 set without a negotiated extension at byte 10040")
    }
}
