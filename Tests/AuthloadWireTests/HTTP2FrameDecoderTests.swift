import Testing

@testable import AuthloadWire

/// Everything one feeding of an HTTP/2 byte stream produced: the frames in order and the error that stopped it.
struct HTTP2Outcome: Hashable {
    var frames: [HTTP2Frame] = []
    var error: HTTP2FrameError?
}

/// Feeds `bytes` to a decoder in the given pieces (all at once by default), pulling frames after each.
func decodeHTTP2(
    _ bytes: [UInt8], start: HTTP2FrameDecoder.Start = .none, pieces: [Range<Int>]? = nil,
    maxFrameSize: Int = HTTP2FrameDecoder.defaultMaxFrameSize
) -> HTTP2Outcome {
    var decoder = HTTP2FrameDecoder(start: start, maxFrameSize: maxFrameSize)
    var outcome = HTTP2Outcome()
    for piece in pieces ?? [0..<bytes.count] {
        decoder.feed(bytes[piece])
        do throws(HTTP2FrameError) {
            while case .frame(let frame) = try decoder.next() { outcome.frames.append(frame) }
        } catch {
            outcome.error = error
            return outcome
        }
    }
    return outcome
}

/// A malformed frame stream and the connection error it must give.
struct MalformedHTTP2: Sendable, CustomTestStringConvertible {
    var name: String
    var hex: String
    var reason: HTTP2FrameError.Reason
    var code: HTTP2ErrorCode
    var testDescription: String { name }

    static let all: [MalformedHTTP2] = [
        .init(name: "PING of 7 bytes", hex: "000007 06 00 00000000 00000000000000", reason: .invalidLength, code: .frameSizeError),
        .init(name: "PING of 9 bytes", hex: "000009 06 00 00000000 000000000000000000", reason: .invalidLength, code: .frameSizeError),
        .init(name: "PING on a stream", hex: "000008 06 00 00000001 0000000000000000", reason: .invalidStreamID, code: .protocolError),
        .init(name: "SETTINGS of 5 bytes", hex: "000005 04 00 00000000 0001000010", reason: .invalidLength, code: .frameSizeError),
        .init(
            name: "SETTINGS ACK with a payload", hex: "000006 04 01 00000000 000100001000", reason: .invalidLength, code: .frameSizeError),
        .init(name: "SETTINGS on a stream", hex: "000000 04 00 00000003", reason: .invalidStreamID, code: .protocolError),
        .init(name: "ENABLE_PUSH of 2", hex: "000006 04 00 00000000 000200000002", reason: .invalidSetting, code: .protocolError),
        .init(
            name: "INITIAL_WINDOW_SIZE of 2^31", hex: "000006 04 00 00000000 000480000000", reason: .invalidSetting,
            code: .flowControlError),
        .init(name: "MAX_FRAME_SIZE of 16383", hex: "000006 04 00 00000000 000500003fff", reason: .invalidSetting, code: .protocolError),
        .init(name: "MAX_FRAME_SIZE of 2^24", hex: "000006 04 00 00000000 000501000000", reason: .invalidSetting, code: .protocolError),
        .init(name: "WINDOW_UPDATE of 3 bytes", hex: "000003 08 00 00000000 000001", reason: .invalidLength, code: .frameSizeError),
        .init(name: "WINDOW_UPDATE of 5 bytes", hex: "000005 08 00 00000001 0000000100", reason: .invalidLength, code: .frameSizeError),
        .init(name: "WINDOW_UPDATE of 0", hex: "000004 08 00 00000001 00000000", reason: .zeroWindowIncrement, code: .protocolError),
        .init(name: "RST_STREAM of 3 bytes", hex: "000003 03 00 00000001 000008", reason: .invalidLength, code: .frameSizeError),
        .init(name: "RST_STREAM on stream 0", hex: "000004 03 00 00000000 00000008", reason: .invalidStreamID, code: .protocolError),
        .init(name: "PRIORITY of 4 bytes", hex: "000004 02 00 00000001 00000000", reason: .invalidLength, code: .frameSizeError),
        .init(name: "PRIORITY on stream 0", hex: "000005 02 00 00000000 0000000010", reason: .invalidStreamID, code: .protocolError),
        .init(name: "DATA on stream 0", hex: "000001 00 00 00000000 61", reason: .invalidStreamID, code: .protocolError),
        .init(name: "HEADERS on stream 0", hex: "000001 01 04 00000000 82", reason: .invalidStreamID, code: .protocolError),
        .init(name: "PUSH_PROMISE on stream 0", hex: "000004 05 04 00000000 00000002", reason: .invalidStreamID, code: .protocolError),
        .init(name: "PUSH_PROMISE of 3 bytes", hex: "000003 05 04 00000001 000000", reason: .invalidLength, code: .frameSizeError),
        .init(name: "GOAWAY of 7 bytes", hex: "000007 07 00 00000000 00000000000000", reason: .invalidLength, code: .frameSizeError),
        .init(name: "GOAWAY on a stream", hex: "000008 07 00 00000001 0000000000000000", reason: .invalidStreamID, code: .protocolError),
        .init(name: "CONTINUATION on stream 0", hex: "000001 09 04 00000000 82", reason: .invalidStreamID, code: .protocolError),
        .init(
            name: "CONTINUATION with no header block", hex: "000001 09 04 00000001 82", reason: .unexpectedFrameInHeaderBlock,
            code: .protocolError),
        .init(
            name: "DATA inside a header block", hex: "000001 01 00 00000001 82 000001 00 00 00000001 61",
            reason: .unexpectedFrameInHeaderBlock, code: .protocolError),
        .init(
            name: "CONTINUATION of another stream", hex: "000001 01 00 00000001 82 000001 09 04 00000003 84",
            reason: .unexpectedFrameInHeaderBlock, code: .protocolError),
        .init(
            name: "unknown frame inside a header block", hex: "000001 01 00 00000001 82 000000 fa 00 00000000",
            reason: .unexpectedFrameInHeaderBlock, code: .protocolError),
        .init(name: "frame over SETTINGS_MAX_FRAME_SIZE", hex: "004001 00 00 00000001", reason: .frameTooLarge, code: .frameSizeError),
        .init(name: "padding as long as the payload", hex: "000003 00 08 00000001 03 6162", reason: .invalidPadding, code: .protocolError),
        .init(name: "padded DATA with no pad length", hex: "000000 00 08 00000001", reason: .invalidLength, code: .frameSizeError),
        .init(
            name: "padded HEADERS with priority too short", hex: "000005 01 2c 00000001 00 00000000",
            reason: .invalidLength, code: .frameSizeError),
        .init(
            name: "HEADERS padding past the priority", hex: "000007 01 2c 00000001 02 0000000010 82", reason: .invalidPadding,
            code: .protocolError)
    ]
}

@Suite struct HTTP2FrameDecoderTests {
    static let frames: [HTTP2Frame] = [
        .settings([HTTP2Setting(.enablePush, 0), HTTP2Setting(.initialWindowSize, 65_535), HTTP2Setting(.init(rawValue: 0xfa), 7)]),
        .settings(ack: true),
        .headers(streamID: 1, fragment: hexBytes("82 86 84"), endStream: true),
        .headers(
            streamID: 3, fragment: hexBytes("82"), endHeaders: false,
            priority: HTTP2Priority(exclusive: true, dependency: 1, weight: 200), padding: 3),
        .continuation(streamID: 3, fragment: hexBytes("86"), endHeaders: false),
        .continuation(streamID: 3, fragment: hexBytes("84")),
        .data(streamID: 1, data: Array("user=alice".utf8)),
        .data(streamID: 3, data: [], endStream: true, padding: 0),
        .data(streamID: 5, data: Array("pw".utf8), padding: 7),
        .priority(streamID: 5, HTTP2Priority(dependency: 3, weight: 0)),
        .rstStream(streamID: 5, .cancel),
        .rstStream(streamID: 7, HTTP2ErrorCode(rawValue: 0xBEEF)),
        .pushPromise(streamID: 1, promisedStreamID: 2, fragment: hexBytes("82 87"), padding: 1),
        .ping(data: 0x0102_0304_0506_0708),
        .ping(ack: true, data: 0),
        .windowUpdate(streamID: 0, increment: 0x7FFF_FFFF),
        .windowUpdate(streamID: 1, increment: 1),
        .goAway(lastStreamID: 5, .enhanceYourCalm, debugData: Array("slow down".utf8))
    ]

    static var stream: [UInt8] { frames.flatMap { HTTP2FrameEncoder.encode($0) } }

    @Test("decodes every frame type it encoded, the stream split at every byte boundary")
    func roundTripAtEverySplit() {
        let bytes = Self.stream
        #expect(decodeHTTP2(bytes) == HTTP2Outcome(frames: Self.frames))
        for split in 0...bytes.count {
            let outcome = decodeHTTP2(bytes, pieces: [0..<split, split..<bytes.count])
            #expect(outcome == HTTP2Outcome(frames: Self.frames), "split at \(split)")
        }
        #expect(decodeHTTP2(bytes, pieces: (0..<bytes.count).map { $0..<$0 + 1 }) == HTTP2Outcome(frames: Self.frames))
    }

    @Test("writes frames as RFC 9113 lays them out")
    func layout() {
        #expect(HTTP2FrameEncoder.encode(.ping(data: 1)) == hexBytes("00 00 08 06 00 00 00 00 00 00 00 00 00 00 00 00 01"))
        #expect(HTTP2FrameEncoder.encode(.settings(ack: true)) == hexBytes("00 00 00 04 01 00 00 00 00"))
        #expect(HTTP2FrameEncoder.encode(.windowUpdate(streamID: 3, increment: 1000)) == hexBytes("00 00 04 08 00 00 00 00 03 00 00 03 e8"))
        #expect(
            HTTP2FrameEncoder.encode(.data(streamID: 1, data: [0x61], endStream: true, padding: 2))
                == hexBytes("00 00 04 00 09 00 00 00 01 02 61 00 00"))
    }

    @Test("refuses each malformed frame with the RFC 9113 error code", arguments: MalformedHTTP2.all)
    func malformed(example: MalformedHTTP2) {
        let bytes = hexBytes(
            example.hex.split(separator: " ").map { word in
                stride(from: 0, to: word.count, by: 2).map { String(word.dropFirst($0).prefix(2)) }.joined(separator: " ")
            }.joined(separator: " "))
        let outcome = decodeHTTP2(bytes)
        #expect(outcome.error?.reason == example.reason)
        #expect(outcome.error?.code == example.code)
        let split = decodeHTTP2(bytes, pieces: (0..<bytes.count).map { $0..<$0 + 1 })
        #expect(split.error == outcome.error)
    }

    @Test("keeps throwing its error after the first")
    func staysFailed() {
        var decoder = HTTP2FrameDecoder(start: .none)
        decoder.feed(hexBytes("00 00 07 06 00 00 00 00 00 00 00 00 00 00 00 00") + HTTP2FrameEncoder.encode(.ping(data: 1)))
        let first = #expect(throws: HTTP2FrameError.self) { try decoder.next() }
        let second = #expect(throws: HTTP2FrameError.self) { try decoder.next() }
        #expect(first == second)
    }

    @Test("a server reads the client preface and then requires SETTINGS")
    func clientPreface() {
        let settings = HTTP2FrameEncoder.encode(.settings([HTTP2Setting(.maxConcurrentStreams, 100)]))
        let ping = HTTP2FrameEncoder.encode(.ping(data: 9))
        let good = HTTP2FrameDecoder.clientPreface + settings + ping
        for split in 0...good.count {
            #expect(
                decodeHTTP2(good, start: .clientPreface, pieces: [0..<split, split..<good.count])
                    == HTTP2Outcome(frames: [.settings([HTTP2Setting(.maxConcurrentStreams, 100)]), .ping(data: 9)]))
        }
        var wrong = good
        wrong[5] = UInt8(ascii: "X")
        #expect(decodeHTTP2(wrong, start: .clientPreface).error?.reason == .invalidPreface)
        #expect(decodeHTTP2(wrong, start: .clientPreface).error?.offset == 5)
        #expect(decodeHTTP2(HTTP2FrameDecoder.clientPreface + ping, start: .clientPreface).error?.reason == .missingSettings)
        #expect(decodeHTTP2(HTTP2FrameEncoder.encode(.settings(ack: true)), start: .serverPreface).error?.reason == .missingSettings)
        #expect(decodeHTTP2(settings + ping, start: .serverPreface).frames.count == 2)
    }

    @Test("skips frames of unknown types")
    func unknownTypes() {
        let bytes = hexBytes("00 00 03 fa 0f 00 00 00 07 01 02 03") + HTTP2FrameEncoder.encode(.ping(data: 2))
        #expect(decodeHTTP2(bytes) == HTTP2Outcome(frames: [.ping(data: 2)]))
    }

    @Test("accepts frames up to the maximum size it was given, and none larger")
    func maxFrameSize() {
        let data = [UInt8](repeating: 7, count: 20_000)
        let bytes = HTTP2FrameEncoder.encode(.data(streamID: 1, data: data))
        #expect(decodeHTTP2(bytes).error?.reason == .frameTooLarge)
        #expect(decodeHTTP2(bytes, maxFrameSize: 20_000) == HTTP2Outcome(frames: [.data(streamID: 1, data: data)]))
    }

    @Test("cuts a header block into HEADERS and CONTINUATION frames that decode in order")
    func headerFrames() {
        let block = (0..<40).map { UInt8($0) }
        let frames = HTTP2FrameEncoder.headerFrames(streamID: 1, block: block, endStream: true, maxFrameSize: 16)
        #expect(frames.count == 3)
        let outcome = decodeHTTP2(frames.flatMap { HTTP2FrameEncoder.encode($0) })
        #expect(outcome.error == nil)
        #expect(outcome.frames == frames)
        #expect(HTTP2FrameEncoder.headerFrames(streamID: 1, block: [], endStream: false, maxFrameSize: 16).count == 1)
    }
}
