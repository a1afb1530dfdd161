import AuthloadCore
import Testing

@testable import AuthloadWire

@Suite("STOMP frame encoding")
struct StompFrameEncoderTests {
    @Test("writes the GCCS client's CONNECT: accept-version only, no host, no heart-beat")
    func gccsConnect() {
        #expect(StompFrameEncoder.encode(.connect()) == stompBytes("CONNECT\naccept-version:1.1,1.2\n\n\0"))
    }

    @Test("writes the GCCS client's SUBSCRIBE with the destination as id and ack:auto")
    func gccsSubscribe() {
        #expect(
            StompFrameEncoder.encode(.subscribe(destination: "/user/queue", id: "/user/queue"))
                == stompBytes("SUBSCRIBE\ndestination:/user/queue\nid:/user/queue\nack:auto\n\n\0"))
    }

    @Test("writes a heart-beat as a single LF")
    func heartBeat() {
        #expect(StompFrameEncoder.heartBeat == [0x0A])
    }

    @Test(
        "escapes CR, LF, colon and backslash in header values",
        arguments: [
            ("a\rb", "a\\rb"),
            ("a\nb", "a\\nb"),
            ("a:b", "a\\cb"),
            ("a\\b", "a\\\\b"),
            ("\r\n:\\", "\\r\\n\\c\\\\"),
            ("plain/text é", "plain/text é")
        ])
    func escapesValues(value: String, escaped: String) {
        let frame = StompFrame(command: .send, headers: ["x": value])
        let bytes = StompFrameEncoder.encode(frame)
        #expect(bytes == stompBytes("SEND\nx:\(escaped)\n\n\0"))
        #expect(stompDecode(bytes).frames == [frame])
    }

    @Test("escapes header names too")
    func escapesNames() {
        let frame = StompFrame(command: .message, headers: ["a:b\\c\nd": "v"])
        let bytes = StompFrameEncoder.encode(frame)
        #expect(bytes == stompBytes("MESSAGE\na\\cb\\\\c\\nd:v\n\n\0"))
        #expect(stompDecode(bytes).frames == [frame])
    }

    @Test("writes CONNECT, STOMP and CONNECTED header values unescaped", arguments: [StompCommand.connect, .stomp, .connected])
    func verbatimFrames(command: StompCommand) {
        let frame = StompFrame(command: command, headers: ["passcode": "a:b\\c"])
        let bytes = StompFrameEncoder.encode(frame)
        #expect(bytes == stompBytes("\(command.rawValue)\npasscode:a:b\\c\n\n\0"))
        #expect(stompDecode(bytes).frames == [frame])
    }

    @Test(
        "drops bytes that have no wire form instead of letting them split the frame",
        arguments: [
            (StompCommand.connect, "pass\r\nword", "passcode:password"),
            (.connected, "x\ny", "passcode:xy"),
            (.send, "a\0b", "passcode:ab")
        ])
    func dropsUnrepresentableBytes(command: StompCommand, value: String, line: String) {
        let bytes = StompFrameEncoder.encode(StompFrame(command: command, headers: ["passcode": value]))
        #expect(bytes == stompBytes("\(command.rawValue)\n\(line)\n\n\0"))
    }

    @Test("drops colons from unescaped header names and skips headers whose name is left empty")
    func sanitisesVerbatimNames() {
        let frame = StompFrame(command: .connect, headers: ["a:b": "1", ":": "2", "\0": "3", "": "4"])
        #expect(StompFrameEncoder.encode(frame) == stompBytes("CONNECT\nab:1\n\n\0"))
    }

    @Test("adds content-length after the other headers when the body is not empty")
    func addsContentLength() {
        let frame = StompFrame(command: .send, headers: ["destination": "/q"], body: [0x61, 0, 0x62])
        #expect(StompFrameEncoder.encode(frame) == stompBytes("SEND\ndestination:/q\ncontent-length:3\n\na\0b\0"))
    }

    @Test("keeps a content-length the frame already has, and adds none for an empty body")
    func keepsContentLength() {
        let given = StompFrame(command: .send, headers: ["content-length": "2", "destination": "/q"], body: [0x61, 0x62])
        #expect(StompFrameEncoder.encode(given) == stompBytes("SEND\ncontent-length:2\ndestination:/q\n\nab\0"))
        #expect(StompFrameEncoder.encode(StompFrame(command: .send)) == stompBytes("SEND\n\n\0"))
        // Recognised as written: dropping the NUL makes this name content-length.
        let sanitised = StompFrame(command: .send, headers: ["content-\0length": "2"], body: [0x61, 0x62])
        #expect(StompFrameEncoder.encode(sanitised) == stompBytes("SEND\ncontent-length:2\n\nab\0"))
    }

    @Test("appends to an existing buffer")
    func encodeInto() {
        var output = StompFrameEncoder.heartBeat
        StompFrameEncoder.encode(.receipt(id: "7"), into: &output)
        #expect(output == stompBytes("\nRECEIPT\nreceipt-id:7\n\n\0"))
    }

    @Test("copies a header whole exactly when byte by byte would write it unchanged, in every kind of frame")
    func fastPathAgrees() {
        // Mostly plain bytes, with each byte that is escaped or dropped somewhere, and a multi-byte character.
        let alphabet: [String] = ["a", "Z", "0", "-", "/", ".", " ", "é", "\r", "\n", ":", "\\", "\u{0}", "]", "\u{7F}"]
        var random = SplitMix64(seed: 33)
        var plain = 0
        for round in 0..<4_000 {
            let length = Int(random.next() % 12)
            let text = (0..<length).map { _ in alphabet[Int(random.next() % UInt64(alphabet.count))] }.joined()
            let (isName, escaping) = (round % 2 == 0, round % 4 < 2)
            var whole: [UInt8] = [0x41]
            StompFrameEncoder.append(text, isName: isName, escaping: escaping, to: &whole)
            var byteByByte: [UInt8] = [0x41]
            StompFrameEncoder.appendEscaping(text, isName: isName, escaping: escaping, to: &byteByByte)
            #expect(whole == byteByByte, "\(Array(text.utf8)) as a \(isName ? "name" : "value"), escaping \(escaping)")
            if byteByByte == [0x41] + Array(text.utf8) { plain += 1 }
        }
        #expect(plain > 400, "the draws include many headers that need no care")
    }

    @Test("writes a MESSAGE without building the frame exactly as it writes the frame, whatever its headers and body hold")
    func messageAgrees() {
        let alphabet: [String] = ["a", "Z", "0", "-", "/", ".", " ", "é", "\r", "\n", ":", "\\", "\u{0}", "]", "\u{7F}"]
        var random = SplitMix64(seed: 34)
        func text() -> String {
            (0..<Int(random.next() % 14)).map { _ in alphabet[Int(random.next() % UInt64(alphabet.count))] }.joined()
        }
        for _ in 0..<2_000 {
            let (destination, subscription, messageID) = (text(), text(), text())
            let contentType = random.next() % 3 == 0 ? nil : text()
            let body = (0..<Int(random.next() % 40)).map { _ in UInt8(truncatingIfNeeded: random.next()) }
            let fast = StompFrameEncoder.encodeMessage(
                destination: destination, subscription: subscription, messageID: messageID, contentType: contentType, body: body)
            let frame = StompFrame.message(
                destination: destination, subscription: subscription, messageID: messageID, contentType: contentType, body: body)
            #expect(fast == StompFrameEncoder.encode(frame), "\(frame)")
        }
        let status = StompFrameEncoder.encodeMessage(
            destination: "/user/queue", subscription: "/user/queue", messageID: "7f3c-1", contentType: "application/json",
            body: Array(#"{"status":"SelectNodes"}"#.utf8))
        let expected =
            "MESSAGE\ndestination:/user/queue\nsubscription:/user/queue\nmessage-id:7f3c-1\n"
            + "content-type:application/json\ncontent-length:24\n\n{\"status\":\"SelectNodes\"}\0"
        #expect(status == stompBytes(expected))
    }
}
