import Testing

@testable import AuthloadWire

/// The bytes of `text`, so frames can be written with `\n`, `\r\n` and `\0` in string literals.
func stompBytes(_ text: String) -> [UInt8] { Array(text.utf8) }

/// Everything one feeding of a byte stream produced: frames and heart-beats in order, and the error that stopped it.
struct StompDecodeOutcome: Hashable, CustomStringConvertible {
    var events: [StompFrameDecoder.Event] = []
    var error: StompError?

    var frames: [StompFrame] {
        events.compactMap { if case .frame(let frame) = $0 { frame } else { nil } }
    }

    var description: String { "\(events) \(error.map { "error: \($0)" } ?? "")" }
}

/// Feeds `bytes` in the given pieces (all at once by default), draining the decoder after each piece.
func stompDecode(
    _ bytes: [UInt8],
    pieces: [Range<Int>]? = nil,
    maxHeaderBytes: Int = 64 * 1024,
    maxBodyBytes: Int = 1 << 20
) -> StompDecodeOutcome {
    var decoder = StompFrameDecoder(maxHeaderBytes: maxHeaderBytes, maxBodyBytes: maxBodyBytes)
    var outcome = StompDecodeOutcome()
    for piece in pieces ?? [0..<bytes.count] {
        decoder.feed(bytes[piece])
        do {
            while true {
                let event = try decoder.next()
                if event == .needMoreData { break }
                outcome.events.append(event)
            }
        } catch {
            outcome.error = error
            return outcome
        }
    }
    return outcome
}

/// `0..<count` cut at `split`, or into pieces of `size` bytes.
func stompPieces(_ count: Int, splitAt split: Int) -> [Range<Int>] { [0..<split, split..<count] }

func stompPieces(_ count: Int, size: Int) -> [Range<Int>] {
    stride(from: 0, to: count, by: size).map { $0..<min($0 + size, count) }
}

@Suite("STOMP frame decoding")
struct StompFrameDecoderTests {
    static let gccsMessage = stompBytes(
        "MESSAGE\ndestination:/user/queue\nsubscription:/user/queue\nmessage-id:7f3c-12\ncontent-type:application/json\n\n"
            + #"{"status":"StartVerificationOfNodes"}"# + "\0"
    )

    @Test("reads the GCCS status MESSAGE from docs/protocols.md, GCCS")
    func gccsExample() throws {
        let outcome = stompDecode(Self.gccsMessage)
        #expect(outcome.error == nil)
        let frame = try #require(outcome.frames.first)
        #expect(outcome.events.count == 1)
        #expect(frame.command == .message)
        #expect(
            frame.headers == [
                "destination": "/user/queue", "subscription": "/user/queue",
                "message-id": "7f3c-12", "content-type": "application/json"
            ])
        #expect(frame.body == stompBytes(#"{"status":"StartVerificationOfNodes"}"#))
    }

    @Test("keeps NUL bytes inside a body framed by content-length")
    func nulInsideContentLengthBody() {
        let outcome = stompDecode(stompBytes("SEND\ncontent-length:5\n\na\0b\0c\0"))
        #expect(outcome.frames == [StompFrame(command: .send, headers: ["content-length": "5"], body: [0x61, 0, 0x62, 0, 0x63])])
        #expect(outcome.error == nil)
    }

    @Test("ends a body without content-length at the first NUL")
    func bodyEndsAtFirstNul() {
        let outcome = stompDecode(stompBytes("SEND\n\nab\0SEND\n\n\0"))
        #expect(outcome.frames.map(\.body) == [stompBytes("ab"), []])
        #expect(outcome.error == nil)
    }

    @Test("reads an empty body framed by content-length:0")
    func zeroContentLength() {
        #expect(stompDecode(stompBytes("SEND\ncontent-length:0\n\n\0")).frames.map(\.body) == [[]])
    }

    @Test("reads two frames from one buffer with heart-beats before, between and after them")
    func framesAndHeartBeats() {
        let outcome = stompDecode(stompBytes("\nRECEIPT\nreceipt-id:1\n\n\0\n\r\n\nERROR\nmessage:bye\n\n\0\n"))
        #expect(
            outcome.events == [
                .heartBeat,
                .frame(.receipt(id: "1")),
                .heartBeat, .heartBeat, .heartBeat,
                .frame(.error(message: "bye")),
                .heartBeat
            ])
        #expect(outcome.error == nil)
    }

    /// Frames and heart-beats covering every framing path, for the split tests.
    static let stream: [UInt8] =
        gccsMessage
        + stompBytes(
            "\n\r\nSEND\r\ndestination:/a\\cb\r\ncontent-length:3\r\n\r\n\0x\0\0\r\n"
                + "CONNECTED\nversion:1.2\nheart-beat:0,0\n\n\0"
                + "MESSAGE\nfoo:\\\\\\n\nfoo:2\n\nno length\0\n"
        )

    @Test("decodes a stream identically whichever offset it is split at")
    func everySplitOffset() throws {
        let whole = stompDecode(Self.stream)
        #expect(whole.error == nil)
        #expect(whole.frames.count == 4)
        #expect(whole.events.count == 8)
        for split in 0...Self.stream.count {
            #expect(stompDecode(Self.stream, pieces: stompPieces(Self.stream.count, splitAt: split)) == whole, "split at \(split)")
        }
    }

    @Test("decodes a stream fed one byte at a time identically")
    func byteAtATime() {
        #expect(stompDecode(Self.stream, pieces: stompPieces(Self.stream.count, size: 1)) == stompDecode(Self.stream))
    }

    @Test("accepts CRLF line endings and reports a trailing CRLF as a heart-beat")
    func crlfFrames() {
        let outcome = stompDecode(stompBytes("MESSAGE\r\ndestination:/q\r\nsubscription:0\r\n\r\nhi\0\r\n"))
        #expect(
            outcome.events == [
                .frame(StompFrame(command: .message, headers: ["destination": "/q", "subscription": "0"], body: stompBytes("hi"))),
                .heartBeat
            ])
    }

    @Test("keeps repeated headers in order and answers lookups with the first")
    func firstHeaderWins() throws {
        let frame = try #require(stompDecode(stompBytes("MESSAGE\nfoo:1\nbar:x\nfoo:2\n\n\0")).frames.first)
        #expect(frame.headers["foo"] == "1")
        #expect(frame.headers.values(for: "foo") == ["1", "2"])
        #expect(frame.headers.map(\.name) == ["foo", "bar", "foo"])
    }

    @Test("frames the body by the first content-length when it repeats")
    func firstContentLengthWins() {
        let outcome = stompDecode(stompBytes("SEND\ncontent-length:3\ncontent-length:x\n\na\0c\0"))
        #expect(outcome.frames.map(\.body) == [[0x61, 0, 0x63]])
        #expect(outcome.error == nil)
    }

    @Test("undoes all four escapes in names and values, and splits at the first raw colon")
    func unescaping() throws {
        let frame = try #require(stompDecode(stompBytes("MESSAGE\na\\cb\\\\:\\r\\n\\c\\\\:x\n\n\0")).frames.first)
        #expect(frame.headers.first?.name == "a:b\\")
        #expect(frame.headers.first?.value == "\r\n:\\:x")
    }

    @Test(
        "reads CONNECT and CONNECTED headers verbatim, backslashes and colons included",
        arguments: [StompCommand.connect, .stomp, .connected])
    func verbatimHeaders(command: StompCommand) throws {
        let frame = try #require(stompDecode(stompBytes("\(command.rawValue)\nlogin:a\\tb:c\\\n\n\0")).frames.first)
        #expect(frame.headers["login"] == "a\\tb:c\\")
    }

    @Test(
        "accepts a header section and a body exactly at their limits",
        arguments: [
            ("SEND\nx:y\n\n\0", 10, 0),
            ("SEND\n\n0123456789\0", 6, 10),
            ("SEND\ncontent-length:10\n\n0123456789\0", 24, 10)
        ])
    func limitsAreInclusive(text: String, maxHeaderBytes: Int, maxBodyBytes: Int) {
        let bytes = stompBytes(text)
        for pieces in [nil, stompPieces(bytes.count, size: 1)] {
            let outcome = stompDecode(bytes, pieces: pieces, maxHeaderBytes: maxHeaderBytes, maxBodyBytes: maxBodyBytes)
            #expect(outcome.error == nil)
            #expect(outcome.frames.count == 1)
        }
    }

    @Test("rejects a frame one byte past each limit")
    func limitsAreEnforced() {
        #expect(stompDecode(stompBytes("SEND\nx:y\n\n\0"), maxHeaderBytes: 9).error?.kind == .headerTooLarge)
        #expect(stompDecode(stompBytes("SEND\n\n\0"), maxHeaderBytes: 0).error?.kind == .headerTooLarge)
        #expect(stompDecode(stompBytes("SEND\n\n0123456789A\0"), maxBodyBytes: 10).error?.kind == .bodyTooLarge)
        #expect(stompDecode(stompBytes("SEND\ncontent-length:11\n\n"), maxBodyBytes: 10).error?.kind == .bodyTooLarge)
    }

    // Found by Fuzz/run.sh stomp: with the largest limit, a 19-digit content-length overflowed Int and trapped.
    @Test("rejects a content-length too large for Int as too large, even with the largest body limit")
    func contentLengthPastIntUnderLargestLimit() {
        for digits in ["9999999999999999999", "99999999999999999999999", "2305843009213693952"] {
            let outcome = stompDecode(stompBytes("SEND\ncontent-length:\(digits)\n\n\0"), maxHeaderBytes: .max, maxBodyBytes: .max)
            #expect(outcome.error?.kind == .bodyTooLarge, "content-length:\(digits)")
            #expect(outcome.error?.offset == 20)
        }
        let fits = stompDecode(stompBytes("SEND\ncontent-length:3\n\nabc\0"), maxHeaderBytes: .max, maxBodyBytes: .max)
        #expect(fits.frames == [StompFrame(command: .send, headers: ["content-length": "3"], body: stompBytes("abc"))])
    }

    @Test("reports buffered bytes of a partial frame, and none once it completes")
    func bufferedByteCount() throws {
        var decoder = StompFrameDecoder()
        decoder.feed(stompBytes("SEND\n\nab"))
        #expect(try decoder.next() == .needMoreData)
        #expect(decoder.bufferedByteCount == 8)
        decoder.feed([0])
        #expect(try decoder.next() == .frame(StompFrame(command: .send, body: stompBytes("ab"))))
        #expect(decoder.bufferedByteCount == 0)
    }

    @Test("holds no buffer once every frame fed is out, whatever size the last one was")
    func bufferReleased() throws {
        var decoder = StompFrameDecoder()
        let body = Array(repeating: UInt8(ascii: "x"), count: 50_000)
        decoder.feed(stompBytes("MESSAGE\n\n") + body + [0])
        #expect(try decoder.next() == .frame(StompFrame(command: .message, body: body)))
        #expect(try decoder.next() == .needMoreData)
        #expect(decoder.retainedCapacity == 0, "a session waiting for its next status keeps no buffer")
        decoder.feed(stompBytes("MESSAGE\n\nok\0\n"))
        #expect(try decoder.next() == .frame(StompFrame(command: .message, body: stompBytes("ok"))))
        #expect(try decoder.next() == .heartBeat)
        #expect(try decoder.next() == .needMoreData)
        #expect(decoder.retainedCapacity == 0)
    }

    @Test("keeps throwing the first error and ignores bytes fed after it")
    func errorsAreSticky() {
        var decoder = StompFrameDecoder()
        decoder.feed(stompBytes("NOPE\n\n\0"))
        let first = #expect(throws: StompError.self) { try decoder.next() }
        decoder.feed(stompBytes("SEND\n\n\0"))
        let second = #expect(throws: StompError.self) { try decoder.next() }
        #expect(first?.kind == .unknownCommand)
        #expect(second == first)
    }

    @Test("reads large frames fed in pieces, moving partly read frames when the buffer is compacted", arguments: [777, 1000, 4099])
    func largeFramesInPieces(pieceSize: Int) {
        let body = Array(repeating: UInt8(ascii: "A"), count: 5000)
        let counted = StompFrameEncoder.encode(.message(destination: "/q", subscription: "s", messageID: "m", body: body))
        // Without content-length the body is found by scanning for NUL, and long headers are scanned line by line.
        let delimited = stompBytes("SEND\n\n") + body + [0]
        let longHead = stompBytes("SEND\n" + String(repeating: "k:v\n", count: 1500) + "\n\0")
        let bytes = (0..<6).flatMap { _ in counted + StompFrameEncoder.heartBeat + delimited + longHead }
        let outcome = stompDecode(bytes, pieces: stompPieces(bytes.count, size: pieceSize))
        #expect(outcome == stompDecode(bytes))
        #expect(outcome.error == nil)
        #expect(outcome.frames.count == 18)
        #expect(outcome.frames.allSatisfy { $0.body == body || $0.headers.count == 1500 })
    }
}
