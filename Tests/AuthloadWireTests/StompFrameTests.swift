import Testing

@testable import AuthloadWire

@Suite("STOMP frames and headers")
struct StompFrameTests {
    static let json = stompBytes(#"{"status":"AuthCompleted"}"#)

    /// One frame from every constructor, with every optional header both left out and given.
    static let constructed: [StompFrame] = [
        .connect(),
        .connect(
            acceptVersion: [.v1_2], host: "staging", login: "user", passcode: "p:a\\ss", heartBeat: StompHeartBeat(send: 0, receive: 10_000)
        ),
        .subscribe(destination: "/user/queue", id: "/user/queue"),
        .subscribe(destination: "/topic/a:b", id: "sub-0", ack: .clientIndividual),
        .unsubscribe(id: "/user/queue"),
        .disconnect(),
        .disconnect(receipt: "bye-1"),
        .connected(),
        .connected(version: .v1_1, heartBeat: StompHeartBeat(send: 10_000, receive: 0), session: "s-1"),
        .message(destination: "/user/queue", subscription: "/user/queue", messageID: "7f3c-12"),
        .message(
            destination: "/user/queue", subscription: "/user/queue", messageID: "7f3c-12", contentType: "application/json", body: json),
        .receipt(id: "bye-1"),
        .error(message: "no common version"),
        .error(message: "malformed frame\nat byte 3", body: stompBytes("details\0with NUL"))
    ]

    @Test("round-trips every constructor through the encoder and decoder", arguments: constructed)
    func roundTrip(frame: StompFrame) {
        var expected = frame
        if !frame.body.isEmpty { expected.headers.append("content-length", "\(frame.body.count)") }
        let outcome = stompDecode(StompFrameEncoder.encode(frame))
        #expect(outcome.error == nil)
        #expect(outcome.frames == [expected])
    }

    @Test(
        "constructors spell the header names, in the order the spec gives them",
        arguments: [
            (
                StompFrame.connect(host: "h", login: "l", passcode: "p", heartBeat: .disabled),
                StompFrame(
                    command: .connect,
                    headers: ["accept-version": "1.1,1.2", "host": "h", "login": "l", "passcode": "p", "heart-beat": "0,0"]
                )
            ),
            (
                .subscribe(destination: "/d", id: "i", ack: .client),
                StompFrame(command: .subscribe, headers: ["destination": "/d", "id": "i", "ack": "client"])
            ),
            (.unsubscribe(id: "i"), StompFrame(command: .unsubscribe, headers: ["id": "i"])),
            (.disconnect(receipt: "r"), StompFrame(command: .disconnect, headers: ["receipt": "r"])),
            (
                .connected(version: .v1_2, heartBeat: StompHeartBeat(send: 1, receive: 2), session: "s"),
                StompFrame(command: .connected, headers: ["version": "1.2", "heart-beat": "1,2", "session": "s"])
            ),
            (
                .message(destination: "/d", subscription: "s", messageID: "m", contentType: "t", body: [0x78]),
                StompFrame(
                    command: .message,
                    headers: ["destination": "/d", "subscription": "s", "message-id": "m", "content-type": "t"],
                    body: [0x78]
                )
            ),
            (.receipt(id: "r"), StompFrame(command: .receipt, headers: ["receipt-id": "r"])),
            (
                .error(message: "m", body: [0x78]),
                StompFrame(command: .error, headers: ["message": "m", "content-type": "text/plain"], body: [0x78])
            )
        ])
    func constructorHeaders(frame: StompFrame, expected: StompFrame) {
        #expect(frame == expected)
    }

    @Test("reads each command from its exact bytes, and no other spelling")
    func commandFromBytes() {
        for command in StompCommand.allCases {
            let bytes = Array(command.rawValue.utf8)
            #expect(StompCommand(bytes[...]) == command)
            #expect(StompCommand(Array(command.rawValue.lowercased().utf8)[...]) == nil)
            #expect(StompCommand(bytes.dropLast()) == nil)
            #expect(StompCommand((bytes + [0x53])[...]) == nil)
        }
        #expect(StompCommand(ArraySlice<UInt8>()) == nil)
        // A command inside a longer buffer, as the decoder hands it over.
        let line = Array("XMESSAGE\n".utf8)
        #expect(StompCommand(line[1..<8]) == .message)
    }

    @Test("tells client commands from server commands, and which escape headers")
    func commandProperties() {
        let server: Set<StompCommand> = [.connected, .message, .receipt, .error]
        let verbatim: Set<StompCommand> = [.connect, .stomp, .connected]
        for command in StompCommand.allCases {
            #expect(command.isClientCommand == !server.contains(command), "\(command)")
            #expect(command.escapesHeaders == !verbatim.contains(command), "\(command)")
        }
        #expect(StompCommand.allCases.count == 15)
    }

    @Test("headers keep literal order and repeats, answer lookups with the first, and compare in order")
    func headers() {
        var headers: StompHeaders = ["b": "1", "a": "2", "b": "3"]
        headers.append("a", "4")
        #expect(headers.map(\.name) == ["b", "a", "b", "a"])
        #expect(headers["b"] == "1")
        #expect(headers["a"] == "2")
        #expect(headers["missing"] == nil)
        #expect(headers.values(for: "a") == ["2", "4"])
        #expect(headers.contains("a") && !headers.contains("A"))
        #expect(headers[2].value == "3")
        #expect(headers != ["a": "2", "b": "1", "b": "3", "a": "4"])
        #expect(headers == StompHeaders([("b", "1"), ("a", "2"), ("b", "3"), ("a", "4")]))
        #expect(Set([headers, headers]).count == 1)
        #expect(headers.description == "[b:1, a:2, b:3, a:4]")
    }
}
