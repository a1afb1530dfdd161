import AuthloadCore
import Testing

@testable import AuthloadWire

@Suite struct WebSocketUpgradeRequestTests {
    @Test("keeps a caller's extra headers and replaces the ones the handshake owns")
    func extendsCallerRequest() throws {
        let caller = HTTPRequest(
            method: "POST", target: "/gccs/ws?lang=en",
            headers: [
                "Authorization": "Bearer t", "Sec-WebSocket-Key": "stale", "Origin": "https://app.example", "Upgrade": "h2c"
            ], body: [1, 2])
        let request = WebSocketHandshake.makeRequest(
            extending: caller, host: "gccs.example:8080", key: "dGhlIHNhbXBsZSBub25jZQ==",
            protocols: ["v12.stomp", "v11.stomp"])
        #expect(request.method == "GET")
        #expect(request.target == "/gccs/ws?lang=en")
        #expect(request.body.isEmpty)
        #expect(request.headers["Host"] == "gccs.example:8080")
        #expect(request.headers.values(of: "Sec-WebSocket-Key") == ["dGhlIHNhbXBsZSBub25jZQ=="])
        #expect(request.headers.values(of: "Upgrade") == ["websocket"])
        #expect(request.headers["Authorization"] == "Bearer t")
        #expect(request.headers["Origin"] == "https://app.example")
        #expect(WebSocketHandshake.offeredProtocols(in: request) == ["v12.stomp", "v11.stomp"])
        // The request passes the server's own checks.
        #expect(throws: Never.self) { try WebSocketHandshake.accept(request: request).get() }
    }

    @Test("a caller's own Host wins over the endpoint's")
    func callerHost() {
        let request = WebSocketHandshake.makeRequest(
            extending: HTTPRequest(method: "GET", target: "/", headers: ["host": "virtual.example"]),
            host: "127.0.0.1:8080", key: WebSocketHandshake.makeKey())
        #expect(request.headers.values(of: "Host") == ["virtual.example"])
    }

    @Test(
        "only an Upgrade naming websocket is a WebSocket upgrade",
        arguments: [
            ("websocket", true), ("WebSocket", true), ("h2c, websocket", true), ("h2c", false), (nil, false)
        ] as [(String?, Bool)])
    func detectsUpgrade(upgrade: String?, expected: Bool) {
        var request = HTTPRequest(method: "GET", target: "/")
        if let upgrade { request.headers.add("Upgrade", upgrade) }
        #expect(WebSocketHandshake.isUpgradeRequest(request) == expected)
    }
}
