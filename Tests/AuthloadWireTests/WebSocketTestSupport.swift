import AuthloadCore

@testable import AuthloadWire

/// Bytes written as hex pairs, e.g. `"81 05 48 65"`, so RFC examples can be copied as printed.
func hexBytes(_ text: String) -> [UInt8] {
    text.split(whereSeparator: { $0 == " " || $0 == "\n" }).map { UInt8($0, radix: 16)! }
}

/// Lower-case hex of `bytes`, for comparing digests with published vectors.
func hexString(_ bytes: [UInt8]) -> String {
    bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
}

/// Everything one feeding of a WebSocket byte stream produced: frames and messages in order, and the error that stopped it.
struct WebSocketOutcome: Hashable {
    var frames: [WebSocketFrame] = []
    var messages: [WebSocketMessageAssembler.Message] = []
    var error: WebSocketError?
}

/// Feeds `bytes` to a decoder in the given pieces (all at once by default), draining frames into an assembler after each.
func decodeWebSocket(
    _ bytes: [UInt8],
    role: WebSocketFrameDecoder.Role = .client,
    pieces: [Range<Int>]? = nil,
    maxFrameSize: Int = 16 * 1024 * 1024,
    maxMessageSize: Int = 16 * 1024 * 1024
) -> WebSocketOutcome {
    var decoder = WebSocketFrameDecoder(role: role, maxFrameSize: maxFrameSize, maxMessageSize: maxMessageSize)
    var assembler = WebSocketMessageAssembler()
    var outcome = WebSocketOutcome()
    for piece in pieces ?? [0..<bytes.count] {
        decoder.feed(bytes[piece])
        do throws(WebSocketError) {
            while case .frame(let frame) = try decoder.next() {
                outcome.frames.append(frame)
                if let message = try assembler.append(frame) { outcome.messages.append(message) }
            }
        } catch {
            outcome.error = error
            return outcome
        }
    }
    return outcome
}

/// One-byte pieces covering `count` bytes.
func singleBytePieces(_ count: Int) -> [Range<Int>] { (0..<count).map { $0..<$0 + 1 } }

/// Encodes frames back to back, each masked with `maskKey` when given.
func encodeFrames(_ frames: [WebSocketFrame], maskKey: UInt32? = nil) -> [UInt8] {
    var bytes: [UInt8] = []
    for frame in frames { WebSocketFrameEncoder.encode(frame, maskKey: maskKey, into: &bytes) }
    return bytes
}
