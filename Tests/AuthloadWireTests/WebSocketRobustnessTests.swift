import AuthloadCore
import Testing

@testable import AuthloadWire

@Suite struct WebSocketRobustnessTests {
    @Test(
        "never crashes on random bytes, and splitting them never changes the outcome",
        arguments: [WebSocketFrameDecoder.Role.client, .server])
    func randomBytes(role: WebSocketFrameDecoder.Role) {
        var generator = SplitMix64(seed: role == .client ? 1 : 2)
        for _ in 0..<2000 {
            let count = Int.random(in: 0...64, using: &generator)
            let bytes = (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let whole = decodeWebSocket(bytes, role: role, maxFrameSize: 4096, maxMessageSize: 8192)
            let split = Int.random(in: 0...count, using: &generator)
            #expect(
                decodeWebSocket(bytes, role: role, pieces: [0..<split, split..<count], maxFrameSize: 4096, maxMessageSize: 8192) == whole)
        }
    }

    @Test("never crashes on valid streams with bytes flipped, and mutants decode the same in pieces")
    func mutatedStreams() {
        var generator = SplitMix64(seed: 3)
        let streams = WebSocketStream.all.filter { $0.role == .client }.map(\.bytes)
        for _ in 0..<3000 {
            var bytes = streams[Int.random(in: 0..<streams.count, using: &generator)]
            for _ in 0..<Int.random(in: 1...3, using: &generator) {
                bytes[Int.random(in: 0..<bytes.count, using: &generator)] ^= UInt8.random(in: 1...255, using: &generator)
            }
            let whole = decodeWebSocket(bytes, maxFrameSize: 1 << 20, maxMessageSize: 1 << 20)
            #expect(decodeWebSocket(bytes, pieces: singleBytePieces(bytes.count), maxFrameSize: 1 << 20, maxMessageSize: 1 << 20) == whole)
        }
    }

    @Test("re-encodes every frame it decoded to the same bytes when lengths are minimal")
    func reencoding() {
        for stream in WebSocketStream.all {
            let outcome = decodeWebSocket(stream.bytes, role: stream.role)
            var bytes: [UInt8] = []
            for frame in outcome.frames { WebSocketFrameEncoder.encode(frame, maskKey: frame.maskKey, into: &bytes) }
            #expect(bytes == stream.bytes, "\(stream.name)")
        }
    }
}
