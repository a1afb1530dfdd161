import AuthloadCore
import Testing

@testable import AuthloadWire

@Suite("Serialization")
struct HTTPSerializationTests {
    private func bytes(of request: HTTPRequest, host: String = "auth.example.com") -> String {
        var out: [UInt8] = []
        request.serialize(into: &out, host: host)
        return String(decoding: out, as: UTF8.self)
    }

    private func bytes(of response: HTTPResponse, keepAlive: Bool = true, head: Bool = false) -> String {
        var out: [UInt8] = []
        response.serialize(into: &out, keepAlive: keepAlive, respondingToHEAD: head)
        return String(decoding: out, as: UTF8.self)
    }

    @Test("writes a request with Host first and a Content-Length for its body")
    func requestBytes() {
        let request = HTTPRequest(
            method: "POST", target: "/login?next=%2F",
            headers: ["Content-Type": "application/x-www-form-urlencoded", "Accept": "*/*"],
            body: wire("a=1")
        )
        #expect(
            bytes(of: request) == """
                POST /login?next=%2F HTTP/1.1\r\nHost: auth.example.com\r\n\
                Content-Type: application/x-www-form-urlencoded\r\nAccept: */*\r\nContent-Length: 3\r\n\r\na=1
                """)
    }

    @Test("keeps a Host header that is already present")
    func existingHost() {
        let request = HTTPRequest(method: "GET", target: "/", headers: ["host": "other:8443"])
        #expect(bytes(of: request) == "GET / HTTP/1.1\r\nhost: other:8443\r\n\r\n")
    }

    @Test(
        "adds Content-Length for a body or a method that expects one",
        arguments: [
            ("GET", "", nil), ("GET", "x", "1"), ("HEAD", "", nil), ("POST", "", "0"), ("PUT", "", "0"),
            ("PATCH", "", "0"), ("DELETE", "", nil), ("DELETE", "{}", "2"), ("OPTIONS", "", nil)
        ] as [(String, String, String?)])
    func contentLengthRules(method: String, body: String, contentLength: String?) throws {
        var out: [UInt8] = []
        HTTPRequest(method: method, target: "/", body: wire(body)).serialize(into: &out, host: "h")
        let request = try #require(parseRequests(out).events.first?.request)
        #expect(request.headers["Content-Length"] == contentLength)
        #expect(request.body == wire(body))
    }

    @Test("replaces a stale Content-Length and never writes it together with chunked")
    func framingHeadersAreOurs() {
        let stale = HTTPRequest(method: "POST", target: "/", headers: ["Content-Length": "999"], body: wire("ab"))
        #expect(bytes(of: stale, host: "h") == "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 2\r\n\r\nab")

        let chunked = HTTPRequest(
            method: "POST", target: "/", headers: ["Transfer-Encoding": "gzip, chunked", "Content-Length": "2"], body: wire("ab")
        )
        #expect(bytes(of: chunked, host: "h") == "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\r\n0\r\n\r\n")
    }

    @Test("cannot be made to split a message by header or target text")
    func injection() throws {
        let request = HTTPRequest(
            method: "GET", target: "/a b/é?q=1\r\n",
            headers: ["X-Evil": "v\r\nInjected: yes", "Bad Name:": "x"]
        )
        let text = bytes(of: request, host: "h")
        #expect(text == "GET /a%20b/%C3%A9?q=1%0D%0A HTTP/1.1\r\nHost: h\r\nX-Evil: v  Injected: yes\r\nBad-Name-: x\r\n\r\n")
        #expect(parseRequests(wire(text)).events.count == 1)
    }

    @Test(
        "round-trips requests through the request parser",
        arguments: [
            HTTPRequest(method: "GET", target: "/idp/idx/introspect", headers: ["Accept": "application/json"]),
            HTTPRequest(
                method: "POST", target: "/idp/idx/identify", headers: ["Content-Type": "application/json"], body: wire(#"{"a":"ü"}"#)),
            HTTPRequest(method: "PUT", target: "/x", headers: ["Transfer-Encoding": "chunked"], body: Array(repeating: 7, count: 5000)),
            HTTPRequest(method: "DELETE", target: "/session/1"),
            HTTPRequest(method: "POST", target: "/empty")
        ])
    func requestRoundTrip(_ request: HTTPRequest) throws {
        var out: [UInt8] = []
        request.serialize(into: &out, host: "staging:8080")
        request.serialize(into: &out, host: "staging:8080")
        let outcome = parseRequests(out)
        #expect(outcome.error == nil)
        #expect(outcome.events.count == 2)
        for event in outcome.events {
            let parsed = try #require(event.request)
            #expect(parsed.method == request.method)
            #expect(parsed.target == request.target)
            #expect(parsed.body == request.body)
            #expect(parsed.headers["Host"] == "staging:8080")
            for field in request.headers where !field.name.caseInsensitiveEquals("Content-Length") {
                #expect(parsed.headers[field.name] == field.value)
            }
        }
    }

    @Test("writes a response with Content-Length, and Connection: close only when not keeping alive")
    func responseBytes() {
        let response = HTTPResponse(status: 200, headers: ["Content-Type": "text/plain"], body: wire("hi"))
        #expect(bytes(of: response) == "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\nhi")
        let closing = HTTPResponse(status: 503, headers: ["Connection": "keep-alive"])
        #expect(
            bytes(of: closing, keepAlive: false) == "HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nContent-Length: 0\r\n\r\n")
    }

    @Test("writes no framing and no body where RFC 9110 forbids a body", arguments: [101, 100, 204, 304])
    func bodylessStatuses(status: Int) {
        let response = HTTPResponse(status: status, reason: "R", headers: ["Content-Length": "5"], body: wire("ignored"))
        #expect(bytes(of: response) == "HTTP/1.1 \(status) R\r\n\r\n")
    }

    @Test("writes the framing of a GET but no body when answering HEAD")
    func headResponse() {
        let response = HTTPResponse(status: 200, body: wire("hello"))
        #expect(bytes(of: response, head: true) == "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n")
        let chunked = HTTPResponse(status: 200, headers: ["Transfer-Encoding": "chunked"], body: wire("hello"))
        #expect(bytes(of: chunked, head: true) == "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
    }

    @Test(
        "round-trips responses through the response parser",
        arguments: [
            (HTTPResponse(status: 200, headers: ["Set-Cookie": "a=1", "set-cookie": "b=2"], body: wire("{}")), true),
            (HTTPResponse(status: 302, headers: ["Location": "/next"]), true),
            (HTTPResponse(status: 404, reason: "", body: wire("missing")), false),
            (HTTPResponse(status: 200, headers: ["Transfer-Encoding": "chunked"], body: Array(repeating: 0xAB, count: 70_000)), true),
            (HTTPResponse(status: 204), true),
            (HTTPResponse(status: 599, reason: "Custom Reason", body: [0, 1, 2]), false)
        ])
    func responseRoundTrip(response: HTTPResponse, keepAlive: Bool) throws {
        var out: [UInt8] = []
        response.serialize(into: &out, keepAlive: keepAlive)
        let outcome = parseResponses(out)
        let event = try #require(outcome.events.first)
        let parsed = try #require(event.response)
        #expect(event.keepAlive == keepAlive)
        #expect(parsed.status == response.status)
        #expect(parsed.reason == response.reason)
        #expect(parsed.body == response.body)
        #expect(parsed.headers.values(of: "set-cookie") == response.headers.values(of: "set-cookie"))
    }

    @Test("a parsed field with obs-text reads as String(decoding:) reads it and is written back byte for byte")
    func obsTextRoundTrip() throws {
        let value: [UInt8] = wire("a") + [0x80, 0xC3, 0xFF, 0xE9] + wire("z")
        let head = wire("HTTP/1.1 200 OK\r\nX-Odd: ") + value + wire("\r\nContent-Length: 0\r\n\r\n")
        let parsed = try #require(parseResponses(head).events.first?.response)
        #expect(parsed.headers["x-odd"] == String(decoding: value, as: UTF8.self))
        // Equality is on the bytes as sent, and the U+FFFD a String holds instead is other bytes.
        #expect(parsed.headers != ["X-Odd": String(decoding: value, as: UTF8.self), "Content-Length": "0"])
        var out: [UInt8] = []
        parsed.serialize(into: &out, keepAlive: true)
        #expect(out == head)
    }

    @Test("a parsed response's headers equal the same headers written as a literal")
    func parsedEqualsLiteral() throws {
        let head = wire("HTTP/1.1 200 OK\r\nServer: nginx\r\nset-cookie: a=1\r\nSet-Cookie: b=2\r\nContent-Length: 0\r\n\r\n")
        let parsed = try #require(parseResponses(head).events.first?.response)
        let literal: HTTPHeaders = ["Server": "nginx", "set-cookie": "a=1", "Set-Cookie": "b=2", "Content-Length": "0"]
        #expect(parsed.headers == literal)
        #expect(parsed.headers.hashValue == literal.hashValue)
        #expect(parsed == HTTPResponse(status: 200, headers: literal))
    }

    @Test("answers HEAD in a way the client parser reads as bodiless")
    func headRoundTrip() throws {
        var out: [UInt8] = []
        HTTPResponse(status: 200, body: wire("hello")).serialize(into: &out, keepAlive: true, respondingToHEAD: true)
        HTTPResponse(status: 200, body: wire("next")).serialize(into: &out, keepAlive: true)
        let outcome = parseResponses(out, methods: ["HEAD", "GET"])
        #expect(outcome.events.map { $0.response?.body } == [[], wire("next")])
        #expect(outcome.events.first?.response?.headers["Content-Length"] == "5")
    }

    @Test("writes decimal and hexadecimal numbers exactly", arguments: [0, 1, 9, 10, 15, 16, 255, 4096, 1_000_000, Int.max])
    func numbers(value: Int) {
        var decimal: [UInt8] = []
        decimal.appendDecimal(value)
        #expect(String(decoding: decimal, as: UTF8.self) == String(value))
        var hex: [UInt8] = []
        hex.appendHex(value)
        #expect(String(decoding: hex, as: UTF8.self) == String(value, radix: 16, uppercase: true))
    }
}
