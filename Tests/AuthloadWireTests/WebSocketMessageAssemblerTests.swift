import Testing

@testable import AuthloadWire

/// A valid frame stream, for checking that the way bytes arrive never changes the result.
struct WebSocketStream: Sendable, CustomTestStringConvertible {
    var name: String
    var bytes: [UInt8]
    var role: WebSocketFrameDecoder.Role = .client
    var testDescription: String { name }

    static let all: [WebSocketStream] = [
        .init(name: "RFC examples back to back", bytes: hexBytes("81 05 48 65 6c 6c 6f 01 03 48 65 6c 80 02 6c 6f 89 05 48 65 6c 6c 6f")),
        .init(
            name: "masked frames from a client",
            bytes: encodeFrames(
                [
                    .text("CONNECT\naccept-version:1.2\n\n\0"), .ping([1, 2]),
                    .close(code: .normalClosure, reason: "bye")
                ], maskKey: 0xA1B2_C3D4),
            role: .server),
        .init(
            name: "pings between the fragments of a binary message",
            bytes: encodeFrames([
                WebSocketFrame(fin: false, opcode: .binary, payload: [1, 2, 3]), .ping([9]),
                WebSocketFrame(fin: false, opcode: .continuation, payload: Array(repeating: 4, count: 200)), .pong(),
                WebSocketFrame(opcode: .continuation, payload: [5])
            ])),
        .init(
            name: "multi-byte characters split across fragments",
            bytes: encodeFrames([
                WebSocketFrame(fin: false, opcode: .text, payload: [0xCE]),
                WebSocketFrame(fin: false, opcode: .continuation, payload: [0xBA, 0xE1, 0xBD]),
                WebSocketFrame(opcode: .continuation, payload: [0xB9, 0xF0, 0x9F, 0x98, 0x80])
            ]))
    ]
}

@Suite struct WebSocketMessageAssemblerTests {
    @Test("delivers control frames at once, between the fragments of a message")
    func interleavedControlFrames() {
        let outcome = decodeWebSocket(WebSocketStream.all[2].bytes)
        #expect(outcome.error == nil)
        #expect(outcome.messages == [.ping([9]), .pong([]), .binary([1, 2, 3] + Array(repeating: 4, count: 200) + [5])])
    }

    @Test("joins a character split across fragments")
    func splitCharacters() {
        #expect(decodeWebSocket(WebSocketStream.all[3].bytes).messages == [.text("κό😀")])
    }

    @Test("decoding byte at a time or split anywhere equals decoding whole", arguments: WebSocketStream.all)
    func splitsDoNotMatter(stream: WebSocketStream) {
        let whole = decodeWebSocket(stream.bytes, role: stream.role)
        #expect(whole.error == nil)
        #expect(decodeWebSocket(stream.bytes, role: stream.role, pieces: singleBytePieces(stream.bytes.count)) == whole)
        for split in 0...stream.bytes.count {
            #expect(
                decodeWebSocket(stream.bytes, role: stream.role, pieces: [0..<split, split..<stream.bytes.count]) == whole,
                "split at \(split)")
        }
    }

    @Test("tracks whether a fragmented message is open")
    func isAssembling() throws {
        var assembler = WebSocketMessageAssembler()
        #expect(try assembler.append(WebSocketFrame(fin: false, opcode: .text, payload: [0x61])) == nil)
        #expect(assembler.isAssembling)
        #expect(try assembler.append(.ping()) == .ping([]))
        #expect(assembler.isAssembling)
        #expect(try assembler.append(WebSocketFrame(opcode: .continuation, payload: [0x62])) == .text("ab"))
        #expect(!assembler.isAssembling)
    }

    @Test("keeps throwing the first error")
    func errorsAreSticky() throws {
        var assembler = WebSocketMessageAssembler()
        let first = try #require(throws: WebSocketError.self) { try assembler.append(WebSocketFrame(opcode: .continuation)) }
        let second = try #require(throws: WebSocketError.self) { try assembler.append(.text("fine")) }
        #expect(first == second)
        #expect(first.kind == .unexpectedContinuation)
    }
}
