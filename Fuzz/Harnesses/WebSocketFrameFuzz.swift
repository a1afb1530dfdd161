// libFuzzer target for the WebSocket frame codec: WebSocketFrameDecoder, WebSocketMessageAssembler,
// WebSocketClosePayload, WebSocketFrameEncoder, and WebSocketChannel, which ties them together.
//
// Input: one control byte (reading role, small or default limits), a split offset, a seed for odd
// reads, then the bytes the peer sent.
// Invariants beyond "does not crash":
// - the decoder and the channel give the same frames, actions and error whole, cut in two at the split
//   offset, and cut into 1–16-byte reads; after an error the decoder throws that error again;
// - an error's offset (framing errors count from the stream, payload errors from the payload) lies within the bytes;
// - no frame or message exceeds its limit; control frames are final and at most 125 bytes;
// - every decoded frame, encoded again with the key it came with, decodes to the same frame;
// - every Close payload that decodes encodes back to the same bytes;
// - everything a channel writes is a frame the other side's decoder reads, and nothing follows its closeConnection.
import AuthloadCore
import AuthloadWire

private struct Decoded: Equatable {
    var frames: [WebSocketFrame] = []
    var messages: [WebSocketMessageAssembler.Message] = []
    var error: WebSocketError?
}

private func decode(
    _ bytes: [UInt8], role: WebSocketFrameDecoder.Role, maxFrame: Int, maxMessage: Int,
    pieces: [Range<Int>]
) -> Decoded {
    var decoder = WebSocketFrameDecoder(role: role, maxFrameSize: maxFrame, maxMessageSize: maxMessage)
    var assembler = WebSocketMessageAssembler()
    var result = Decoded()
    for piece in pieces {
        decoder.feed(bytes[piece])
        do throws(WebSocketError) {
            while case .frame(let frame) = try decoder.next() {
                result.frames.append(frame)
                if let message = try assembler.append(frame) { result.messages.append(message) }
            }
        } catch {
            result.error = error
            return result
        }
    }
    return result
}

private func channelActions(
    _ bytes: [UInt8], role: WebSocketChannel.Role, maxMessage: Int,
    pieces: [Range<Int>]
) -> [WebSocketChannel.Action] {
    var channel = WebSocketChannel(role: role, maxMessageSize: maxMessage)
    var actions: [WebSocketChannel.Action] = []
    for piece in pieces {
        let new = channel.received(Array(bytes[piece]))
        if case .closeConnection? = actions.last { require(new.isEmpty, "actions after closeConnection: \(new)") }
        actions += new
    }
    let wasClosed = channel.isClosed
    let end = channel.connectionEnded()
    require(end.isEmpty == wasClosed, "connectionEnded gave \(end) on a channel closed: \(wasClosed)")
    return actions + end
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzWebSocketFrames(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    let control = input.byte()
    let split = input.uint16()
    let seed = input.byte()
    let bytes = input.rest

    let server = control & 1 != 0
    let role: WebSocketFrameDecoder.Role = server ? .server : .client
    let maxFrame = control & 2 != 0 ? Int(control >> 2) * 4 : 16 * 1024 * 1024
    let maxMessage = control & 2 != 0 ? Int(control >> 2) * 8 : 16 * 1024 * 1024

    let whole = decode(bytes, role: role, maxFrame: maxFrame, maxMessage: maxMessage, pieces: [0..<bytes.count])
    let halves = decode(bytes, role: role, maxFrame: maxFrame, maxMessage: maxMessage, pieces: pieces(bytes.count, splitAt: split))
    require(halves == whole, "split at \(split) gave \(halves), whole gave \(whole)")
    let reads = decode(bytes, role: role, maxFrame: maxFrame, maxMessage: maxMessage, pieces: pieces(bytes.count, seed: seed))
    require(reads == whole, "odd reads gave \(reads), whole gave \(whole)")

    if let error = whole.error, let offset = error.offset {
        require(offset >= 0 && offset <= bytes.count, "error offset \(offset) outside the \(bytes.count) bytes: \(error)")
    }
    var decoder = WebSocketFrameDecoder(role: role, maxFrameSize: maxFrame, maxMessageSize: maxMessage)
    decoder.feed(bytes)
    do {
        while case .frame = try decoder.next() {}
    } catch {
        requireSticky(error) { () throws(WebSocketError) in try decoder.next() }
    }

    for frame in whole.frames {
        require(frame.payload.count <= maxFrame, "frame of \(frame.payload.count) bytes over the \(maxFrame) limit")
        require(!frame.opcode.isControl || (frame.fin && frame.payload.count <= 125), "bad control frame \(frame)")
        require((frame.maskKey != nil) == server, "mask \(String(describing: frame.maskKey)) read by the \(role)")
        var again = WebSocketFrameDecoder(role: role)
        again.feed(WebSocketFrameEncoder.encode(frame, maskKey: frame.maskKey))
        do {
            let event = try again.next()
            require(event == .frame(frame), "\(frame) re-encoded decodes as \(event)")
        } catch {
            require(false, "\(frame) re-encoded fails: \(error)")
        }
        if frame.opcode == .close, let close = try? WebSocketClosePayload(decoding: frame.payload) {
            require(close.bytes == frame.payload, "Close payload \(frame.payload) encodes back as \(close.bytes)")
        }
    }
    for message in whole.messages {
        switch message {
        case .text(let text): require(text.utf8.count <= maxMessage, "text message over the limit")
        case .binary(let data): require(data.count <= maxMessage, "binary message over the limit")
        default: break
        }
    }

    // A server channel writes unmasked frames, so its actions are deterministic and must not depend on the cuts.
    // A client channel masks with random keys: there, what it writes must be frames a server reads.
    let channelRole: WebSocketChannel.Role = server ? .server : .client
    let actions = channelActions(bytes, role: channelRole, maxMessage: maxMessage, pieces: [0..<bytes.count])
    if server {
        let split = channelActions(bytes, role: channelRole, maxMessage: maxMessage, pieces: pieces(bytes.count, seed: seed))
        require(split == actions, "channel gave \(split) in pieces, \(actions) whole")
    }
    var peer = WebSocketFrameDecoder(role: server ? .client : .server)
    for case .write(let written) in actions { peer.feed(written) }
    do {
        while case .frame(let frame) = try peer.next() {
            require(frame.opcode.isControl, "channel wrote a data frame on its own: \(frame)")
        }
        require(peer.bufferedByteCount == 0, "channel wrote a partial frame")
    } catch {
        require(false, "the peer cannot read what the channel wrote: \(error)")
    }
    return 0
}
