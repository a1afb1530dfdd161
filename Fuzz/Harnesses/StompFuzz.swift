// libFuzzer target for the STOMP codec: StompFrameDecoder and StompFrameEncoder.
//
// Input: one control byte (which limits), a split offset, a seed for odd reads, then the bytes of the
// stream (one or more WebSocket messages' worth of frames and heart-beats).
// Invariants beyond "does not crash":
// - the stream decodes to the same frames, heart-beats and error whole, cut in two at the split offset,
//   and cut into 1–16-byte reads; after an error the decoder throws that error again, and its offset
//   lies within the bytes fed;
// - no body exceeds the body limit;
// - every decoded frame, encoded, decodes to one frame with the same command, headers and body, plus the
//   `content-length` the encoder adds to a body that had none; encoding that frame gives the same bytes.
import AuthloadWire

private struct Decoded: Equatable {
    var events: [StompFrameDecoder.Event] = []
    var error: StompError?
}

private func decode(_ bytes: [UInt8], maxHeaderBytes: Int, maxBodyBytes: Int, pieces: [Range<Int>]) -> Decoded {
    var decoder = StompFrameDecoder(maxHeaderBytes: maxHeaderBytes, maxBodyBytes: maxBodyBytes)
    var result = Decoded()
    for piece in pieces {
        decoder.feed(bytes[piece])
        do throws(StompError) {
            while true {
                let event = try decoder.next()
                if event == .needMoreData { break }
                result.events.append(event)
            }
        } catch {
            result.error = error
            requireSticky(error) { () throws(StompError) in try decoder.next() }
            return result
        }
    }
    return result
}

private func decodeOne(_ bytes: [UInt8]) -> StompFrame? {
    var decoder = StompFrameDecoder()
    decoder.feed(bytes)
    do {
        let event = try decoder.next()
        guard case .frame(let frame) = event else {
            require(false, "encoded frame decodes as \(event)")
            return nil
        }
        let after = try decoder.next()
        require(after == .needMoreData && decoder.bufferedByteCount == 0, "encoded frame followed by \(after)")
        return frame
    } catch {
        require(false, "encoded frame \(bytes) does not decode: \(error)")
        return nil
    }
}

private func checkRoundTrip(_ frame: StompFrame) {
    let encoded = StompFrameEncoder.encode(frame)
    guard let again = decodeOne(encoded) else { return }
    var expected = frame.headers
    if !frame.body.isEmpty, !frame.headers.contains("content-length") {
        expected.append("content-length", String(frame.body.count))
    }
    require(again.command == frame.command, "command \(frame.command) came back as \(again.command)")
    require(again.body == frame.body, "body of \(frame.body.count) bytes came back as \(again.body.count)")
    require(again.headers == expected, "headers \(Array(frame.headers)) came back as \(Array(again.headers))")
    require(StompFrameEncoder.encode(again) == encoded, "encoding is not stable for \(frame)")
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzStomp(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    let control = input.byte()
    let split = input.uint16()
    let seed = input.byte()
    let bytes = input.rest

    // Small limits reach the limit checks; the largest values check that no arithmetic near them overflows.
    let maxHeaderBytes: Int
    let maxBodyBytes: Int
    switch control & 3 {
    case 0: (maxHeaderBytes, maxBodyBytes) = (64 * 1024, 1 << 20)
    case 1: (maxHeaderBytes, maxBodyBytes) = (Int(control >> 2), Int(control >> 4))
    case 2: (maxHeaderBytes, maxBodyBytes) = (Int.max, Int.max)
    default: (maxHeaderBytes, maxBodyBytes) = (8 + Int(control >> 2) * 4, 1 << 20)
    }

    let whole = decode(bytes, maxHeaderBytes: maxHeaderBytes, maxBodyBytes: maxBodyBytes, pieces: [0..<bytes.count])
    let halves = decode(bytes, maxHeaderBytes: maxHeaderBytes, maxBodyBytes: maxBodyBytes, pieces: pieces(bytes.count, splitAt: split))
    require(halves == whole, "split at \(split) gave \(halves), whole gave \(whole)")
    let reads = decode(bytes, maxHeaderBytes: maxHeaderBytes, maxBodyBytes: maxBodyBytes, pieces: pieces(bytes.count, seed: seed))
    require(reads == whole, "odd reads gave \(reads), whole gave \(whole)")

    if let error = whole.error {
        require((0...bytes.count).contains(error.offset), "error offset \(error.offset) outside the \(bytes.count) bytes: \(error)")
    }
    for case .frame(let frame) in whole.events {
        require(frame.body.count <= maxBodyBytes, "body of \(frame.body.count) bytes over the \(maxBodyBytes) limit")
        checkRoundTrip(frame)
    }
    return 0
}
