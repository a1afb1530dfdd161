import AuthloadCore
import Testing

@testable import AuthloadWire

/// A server response to the handshake and exactly how the client must judge it.
struct HandshakeResponseCase: Sendable, CustomTestStringConvertible {
    var name: String
    var response: HTTPResponse
    var offered: [String] = ["v12.stomp", "v11.stomp"]
    var kind: WebSocketError.Kind
    var description: String
    var testDescription: String { name }

    static let key = "dGhlIHNhbXBsZSBub25jZQ=="
    static let accept = "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="

    static func switching(_ change: (inout HTTPHeaders) -> Void) -> HTTPResponse {
        var headers: HTTPHeaders = ["Upgrade": "websocket", "Connection": "Upgrade", "Sec-WebSocket-Accept": accept]
        change(&headers)
        return HTTPResponse(status: 101, headers: headers)
    }

    static let all: [HandshakeResponseCase] = [
        .init(
            name: "403", response: HTTPResponse(status: 403), kind: .unexpectedStatus,
            description: "WebSocket handshake failed: server answered 403 'Forbidden' instead of 101 Switching Protocols"),
        .init(
            name: "503", response: HTTPResponse(status: 503), kind: .unexpectedStatus,
            description: "WebSocket handshake failed: server answered 503 'Service Unavailable' instead of 101 Switching Protocols"),
        .init(
            name: "200 with the upgrade headers", response: HTTPResponse(status: 200, headers: switching { _ in }.headers),
            kind: .unexpectedStatus, description: "WebSocket handshake failed: server answered 200 'OK' instead of 101 Switching Protocols"),
        .init(
            name: "missing Upgrade", response: switching { $0.remove("Upgrade") }, kind: .invalidUpgrade,
            description: "WebSocket handshake failed: 101 response has no Upgrade header"),
        .init(
            name: "Upgrade to another protocol", response: switching { $0.set("Upgrade", "h2c") }, kind: .invalidUpgrade,
            description: "WebSocket handshake failed: 101 response has Upgrade 'h2c' instead of 'websocket'"),
        .init(
            name: "missing Connection", response: switching { $0.remove("Connection") }, kind: .invalidConnection,
            description: "WebSocket handshake failed: 101 response has no 'upgrade' token in Connection"),
        .init(
            name: "Connection without upgrade", response: switching { $0.set("Connection", "keep-alive") }, kind: .invalidConnection,
            description: "WebSocket handshake failed: 101 response has no 'upgrade' token in Connection"),
        .init(
            name: "missing accept", response: switching { $0.remove("Sec-WebSocket-Accept") }, kind: .invalidAccept,
            description: "WebSocket handshake failed: 101 response has no Sec-WebSocket-Accept"),
        .init(
            name: "bad accept", response: switching { $0.set("Sec-WebSocket-Accept", "AAAAAAAAAAAAAAAAAAAAAAAAAAA=") },
            kind: .invalidAccept,
            description:
                "WebSocket handshake failed: Sec-WebSocket-Accept 'AAAAAAAAAAAAAAAAAAAAAAAAAAA=' does not match the key (expected '\(accept)')"
        ),
        .init(
            name: "accept of the key itself", response: switching { $0.set("Sec-WebSocket-Accept", key) }, kind: .invalidAccept,
            description: "WebSocket handshake failed: Sec-WebSocket-Accept '\(key)' does not match the key (expected '\(accept)')"),
        .init(
            name: "an extension nobody offered", response: switching { $0.add("Sec-WebSocket-Extensions", "permessage-deflate") },
            kind: .unexpectedExtension,
            description: "WebSocket handshake failed: server selected extension 'permessage-deflate', but none was offered"),
        .init(
            name: "unoffered protocol", response: switching { $0.add("Sec-WebSocket-Protocol", "v10.stomp") }, kind: .unexpectedProtocol,
            description: "WebSocket handshake failed: server selected sub-protocol 'v10.stomp', but offered: v12.stomp, v11.stomp"),
        .init(
            name: "protocol when none was offered", response: switching { $0.add("Sec-WebSocket-Protocol", "v12.stomp") }, offered: [],
            kind: .unexpectedProtocol,
            description: "WebSocket handshake failed: server selected sub-protocol 'v12.stomp', but none was offered"),
        .init(
            name: "two protocols", response: switching { $0.add("Sec-WebSocket-Protocol", "v12.stomp, v11.stomp") },
            kind: .unexpectedProtocol,
            description: "WebSocket handshake failed: server selected 2 sub-protocols; at most one is allowed"),
        .init(
            name: "protocol in another case", response: switching { $0.add("Sec-WebSocket-Protocol", "V12.STOMP") },
            kind: .unexpectedProtocol,
            description: "WebSocket handshake failed: server selected sub-protocol 'V12.STOMP', but offered: v12.stomp, v11.stomp")
    ]
}

@Suite struct WebSocketHandshakeClientTests {
    @Test("computes the RFC 6455 §1.3 accept value")
    func acceptVector() {
        #expect(WebSocketHandshake.acceptValue(forKey: "dGhlIHNhbXBsZSBub25jZQ==") == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
    }

    @Test("makes fresh keys of 16 random bytes in base64")
    func keys() throws {
        let keys = (0..<32).map { _ in WebSocketHandshake.makeKey() }
        #expect(Set(keys).count == keys.count)
        for key in keys {
            #expect(key.utf8.count == 24)
            #expect(try #require(Base64.decoded(key)).count == 16)
        }
    }

    @Test("builds the upgrade request of docs/protocols.md, WebSocket")
    func request() {
        let request = WebSocketHandshake.makeRequest(
            target: "/ws?x=1", host: "gccs.example:443", key: "k", protocols: ["v12.stomp", "v11.stomp"],
            origin: "https://app.example")
        #expect(request.method == "GET")
        #expect(request.target == "/ws?x=1")
        #expect(request.body.isEmpty)
        #expect(
            request.headers.fields == [
                HTTPField("Host", "gccs.example:443"), HTTPField("Upgrade", "websocket"), HTTPField("Connection", "Upgrade"),
                HTTPField("Sec-WebSocket-Key", "k"), HTTPField("Sec-WebSocket-Version", "13"), HTTPField("Origin", "https://app.example"),
                HTTPField("Sec-WebSocket-Protocol", "v12.stomp, v11.stomp")
            ])
        #expect(
            WebSocketHandshake.makeRequest(target: "/", host: "h", key: "k").headers.fields.map(\.name)
                == ["Host", "Upgrade", "Connection", "Sec-WebSocket-Key", "Sec-WebSocket-Version"])
    }

    @Test("accepts a 101 regardless of header case and list position, returning the selected protocol")
    func validResponses() throws {
        let key = HandshakeResponseCase.key
        let plain = HandshakeResponseCase.switching { _ in }
        #expect(try WebSocketHandshake.validate(response: plain, key: key, offeredProtocols: ["v12.stomp"]) == nil)
        let loose = HTTPResponse(
            status: 101,
            headers: [
                "upgrade": "WebSocket", "connection": "keep-alive, UPGRADE", "sec-websocket-accept": HandshakeResponseCase.accept,
                "sec-websocket-protocol": "v11.stomp"
            ])
        #expect(try WebSocketHandshake.validate(response: loose, key: key, offeredProtocols: ["v12.stomp", "v11.stomp"]) == "v11.stomp")
    }

    @Test("rejects each bad response with its own error", arguments: HandshakeResponseCase.all)
    func invalidResponses(testCase: HandshakeResponseCase) throws {
        let error = try #require(throws: WebSocketError.self) {
            try WebSocketHandshake.validate(response: testCase.response, key: HandshakeResponseCase.key, offeredProtocols: testCase.offered)
        }
        #expect(error.kind == testCase.kind)
        #expect(error.description == testCase.description)
        #expect(error.closeCode == .abnormalClosure)
        #expect(error.offset == nil)
    }

    @Test("round-trips through the server side")
    func roundTrip() throws {
        let key = WebSocketHandshake.makeKey()
        let request = WebSocketHandshake.makeRequest(target: "/stomp", host: "h", key: key, protocols: ["v12.stomp", "v11.stomp"])
        let response = try WebSocketHandshake.accept(request: request, supportedProtocols: ["v11.stomp", "v12.stomp"]).get()
        #expect(try WebSocketHandshake.validate(response: response, key: key, offeredProtocols: ["v12.stomp", "v11.stomp"]) == "v12.stomp")
    }
}

/// An upgrade request the server must refuse, and how.
struct HandshakeRequestCase: Sendable, CustomTestStringConvertible {
    var name: String
    var request: HTTPRequest
    var kind: WebSocketError.Kind
    var status: Int
    var description: String
    var testDescription: String { name }

    static func request(_ change: (inout HTTPRequest) -> Void) -> HTTPRequest {
        var request = WebSocketHandshake.makeRequest(target: "/ws", host: "h", key: HandshakeResponseCase.key)
        change(&request)
        return request
    }

    static let all: [HandshakeRequestCase] = [
        .init(
            name: "POST", request: request { $0.method = "POST" }, kind: .invalidMethod, status: 405,
            description: "WebSocket handshake failed: method 'POST' is not GET"),
        .init(
            name: "no Upgrade", request: request { $0.headers.remove("Upgrade") }, kind: .invalidUpgrade, status: 400,
            description: "WebSocket handshake failed: request has no 'websocket' token in Upgrade"),
        .init(
            name: "no Connection upgrade", request: request { $0.headers.set("Connection", "keep-alive") }, kind: .invalidConnection,
            status: 400,
            description: "WebSocket handshake failed: request has no 'upgrade' token in Connection"),
        .init(
            name: "version 8", request: request { $0.headers.set("Sec-WebSocket-Version", "8") }, kind: .unsupportedVersion, status: 426,
            description: "WebSocket handshake failed: Sec-WebSocket-Version '8' is not 13"),
        .init(
            name: "no version", request: request { $0.headers.remove("Sec-WebSocket-Version") }, kind: .unsupportedVersion, status: 426,
            description: "WebSocket handshake failed: request has no Sec-WebSocket-Version; only 13 is supported"),
        .init(
            name: "no key", request: request { $0.headers.remove("Sec-WebSocket-Key") }, kind: .invalidKey, status: 400,
            description: "WebSocket handshake failed: request has no Sec-WebSocket-Key"),
        .init(
            name: "two keys", request: request { $0.headers.add("Sec-WebSocket-Key", HandshakeResponseCase.key) }, kind: .invalidKey,
            status: 400, description: "WebSocket handshake failed: request has 2 Sec-WebSocket-Key headers"),
        .init(
            name: "a 15-byte key", request: request { $0.headers.set("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25j") }, kind: .invalidKey,
            status: 400, description: "WebSocket handshake failed: Sec-WebSocket-Key 'dGhlIHNhbXBsZSBub25j' is not base64 of 16 bytes"),
        .init(
            name: "a key that is not base64", request: request { $0.headers.set("Sec-WebSocket-Key", "not a key!") }, kind: .invalidKey,
            status: 400, description: "WebSocket handshake failed: Sec-WebSocket-Key 'not a key!' is not base64 of 16 bytes")
    ]
}

@Suite struct WebSocketHandshakeServerTests {
    @Test("answers a valid request with 101 and the accept value")
    func accepts() throws {
        let request = HandshakeRequestCase.request { $0.headers.set("Upgrade", "WebSocket") }
        let response = try WebSocketHandshake.accept(request: request, supportedProtocols: ["v12.stomp"]).get()
        #expect(response.status == 101)
        #expect(
            response.headers.fields == [
                HTTPField("Upgrade", "websocket"), HTTPField("Connection", "Upgrade"),
                HTTPField("Sec-WebSocket-Accept", HandshakeResponseCase.accept)
            ])
    }

    @Test(
        "selects the first protocol the client offered that the server supports",
        arguments: [
            (["v10.stomp, v12.stomp", "v11.stomp"], ["v11.stomp", "v12.stomp"], "v12.stomp"),
            (["v11.stomp"], ["v12.stomp", "v11.stomp"], "v11.stomp"),
            (["v10.stomp"], ["v12.stomp"], nil),
            ([], ["v12.stomp"], nil)
        ] as [([String], [String], String?)])
    func protocolSelection(offered: [String], supported: [String], selected: String?) throws {
        let request = HandshakeRequestCase.request { request in for name in offered { request.headers.add("Sec-WebSocket-Protocol", name) }
        }
        let response = try WebSocketHandshake.accept(request: request, supportedProtocols: supported).get()
        #expect(response.headers["Sec-WebSocket-Protocol"] == selected)
    }

    @Test("refuses a bad request with the status and headers it calls for", arguments: HandshakeRequestCase.all)
    func refuses(testCase: HandshakeRequestCase) throws {
        let result = WebSocketHandshake.accept(request: testCase.request, supportedProtocols: [])
        guard case .failure(let error) = result else {
            Issue.record("accepted: \(result)")
            return
        }
        #expect(error.kind == testCase.kind)
        #expect(error.description == testCase.description)
        let rejection = WebSocketHandshake.rejection(for: error)
        #expect(rejection.status == testCase.status)
        #expect(rejection.headers["Sec-WebSocket-Version"] == (testCase.status == 426 ? "13" : nil))
        #expect(rejection.headers["Allow"] == (testCase.status == 405 ? "GET" : nil))
        #expect(rejection.body == Array("\(testCase.description)\n".utf8))
    }
}
