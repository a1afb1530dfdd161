import AuthloadCore
import Testing

@testable import AuthloadWire

@Suite("Request parser")
struct HTTPRequestParserTests {
    @Test("reads method, target, headers and no body when there is no framing header")
    func simpleGet() throws {
        let outcome = parseRequests(wire("GET /csdk-sample/SDK/login?x=1&y=%20 HTTP/1.1\r\nHost: example.com\r\nAccept: */*\r\n\r\n"))
        let request = try #require(outcome.events.first?.request)
        #expect(request.method == "GET")
        #expect(request.target == "/csdk-sample/SDK/login?x=1&y=%20")
        #expect(request.path == "/csdk-sample/SDK/login")
        #expect(request.headers.fields == [HTTPField("Host", "example.com"), HTTPField("Accept", "*/*")])
        #expect(request.body.isEmpty)
        #expect(outcome.events.first?.keepAlive == true)
    }

    @Test("reads a Content-Length body")
    func contentLengthBody() throws {
        let outcome = parseRequests(
            wire(
                "POST /login HTTP/1.1\r\nHost: a\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 7\r\n\r\nuser=ab"
            ))
        let request = try #require(outcome.events.first?.request)
        #expect(request.method == "POST")
        #expect(request.body == wire("user=ab"))
    }

    @Test("reads a chunked body with extensions and trailers")
    func chunkedBody() throws {
        let outcome = parseRequests(
            wire(
                "PUT /upload HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n3;x=y\r\nabc\r\n2\r\nde\r\n0\r\nDigest: z\r\n\r\n"
            ))
        let request = try #require(outcome.events.first?.request, "\(String(describing: outcome.error))")
        #expect(request.body == wire("abcde"))
    }

    @Test("parses pipelined requests one after another")
    func pipelined() throws {
        let stream = """
            GET /a HTTP/1.1\r\nHost: h\r\n\r\n\
            POST /b HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\nxyz\
            HEAD /c HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n
            """
        let outcome = parseRequests(wire(stream))
        #expect(outcome.error == nil)
        #expect(outcome.events.map { $0.request?.target } == ["/a", "/b", "/c"])
        #expect(outcome.events.map { $0.request?.body.count } == [0, 3, 0])
        #expect(outcome.events.map(\.keepAlive) == [true, true, false])
    }

    @Test("accepts HTTP/1.0 requests without Host, and any method token")
    func http10() throws {
        let outcome = parseRequests(wire("PURGE /cache HTTP/1.0\r\n\r\n"))
        #expect(outcome.events.first?.request?.method == "PURGE")
        #expect(outcome.events.first?.keepAlive == false)
    }

    @Test(
        "accepts absolute-form and asterisk-form targets",
        arguments: [
            "http://example.com/x?y", "*", "example.com:443"
        ])
    func targetForms(target: String) throws {
        let outcome = parseRequests(wire("OPTIONS \(target) HTTP/1.1\r\nHost: example.com\r\n\r\n"))
        #expect(outcome.events.first?.request?.target == target)
    }

    @Test("hands over bytes after an upgrade request for the WebSocket codec")
    func upgradeLeftover() throws {
        var parser = HTTPRequestParser()
        parser.feed(wire("GET /ws HTTP/1.1\r\nHost: h\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n") + [0x81, 0x80])
        let request = try #require(try parser.next().request)
        #expect(request.headers["upgrade"] == "websocket")
        #expect(parser.takeUnparsedBytes() == [0x81, 0x80])
    }

    @Test("reports a clean end of stream and when a request has started")
    func endOfStream() throws {
        var parser = HTTPRequestParser()
        #expect(!parser.hasReceivedBytes)
        parser.feed(wire("GET / HTTP/1.1\r\nHost: h\r\n\r\nG"))
        #expect(try parser.next().request?.target == "/")
        #expect(parser.hasReceivedBytes)
        parser.feed(wire("ET / HTTP/1.1\r\nHost: h\r\n\r\n"))
        #expect(try parser.next().request != nil)
        #expect(!parser.hasReceivedBytes)
        parser.endOfStream()
        #expect(try parser.next() == .endOfStream)
    }
}
