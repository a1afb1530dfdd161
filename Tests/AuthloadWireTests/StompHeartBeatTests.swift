import Testing

@testable import AuthloadWire

@Suite("STOMP heart-beat negotiation")
struct StompHeartBeatTests {
    @Test(
        "parses 'cx,cy' header values and rejects anything else",
        arguments: [
            ("0,0", StompHeartBeat?.some(.disabled)),
            ("10000,5000", StompHeartBeat(send: 10_000, receive: 5_000)),
            (" 10000 , 5000 ", StompHeartBeat(send: 10_000, receive: 5_000)),
            ("", nil), (",", nil), ("1,", nil), (",1", nil), ("1,2,3", nil), ("a,b", nil), ("-1,0", nil), ("1.5,0", nil),
            ("1 0,0", nil), ("9999999999999999999,1", nil)
        ])
    func parse(text: String, expected: StompHeartBeat?) {
        #expect(StompHeartBeat(text) == expected)
    }

    @Test("writes the header value and clamps negative intervals to 0")
    func description() {
        #expect(StompHeartBeat(send: 10_000, receive: 0).description == "10000,0")
        #expect(StompHeartBeat(send: -5, receive: -1) == .disabled)
    }

    @Test(
        "negotiates each direction: 0 when either side declines, otherwise the larger interval",
        arguments: [
            // (cx, cy, sx, sy) → (client→server, server→client)
            ((0, 0, 0, 0), (0, 0)),
            ((0, 0, 10_000, 10_000), (0, 0)), // the GCCS client: no header, so nothing either way
            ((1_000, 0, 0, 5_000), (5_000, 0)),
            ((0, 1_000, 5_000, 0), (0, 5_000)),
            ((1_000, 1_000, 5_000, 5_000), (5_000, 5_000)),
            ((5_000, 5_000, 1_000, 1_000), (5_000, 5_000)),
            ((100, 200, 300, 400), (400, 300)),
            ((10_000, 0, 0, 10_000), (10_000, 0)),
            ((0, 10_000, 10_000, 0), (0, 10_000))
        ])
    func negotiate(offers: (cx: Int, cy: Int, sx: Int, sy: Int), intervals: (clientToServer: Int, serverToClient: Int)) {
        let (clientToServer, serverToClient) = intervals
        let negotiated = StompHeartBeat.negotiate(
            client: StompHeartBeat(send: offers.cx, receive: offers.cy),
            server: StompHeartBeat(send: offers.sx, receive: offers.sy)
        )
        #expect(negotiated.clientToServerMilliseconds == clientToServer)
        #expect(negotiated.serverToClientMilliseconds == serverToClient)
        #expect(negotiated.clientToServer == (clientToServer == 0 ? nil : .milliseconds(clientToServer)))
        #expect(negotiated.serverToClient == (serverToClient == 0 ? nil : .milliseconds(serverToClient)))
    }
}
