import AuthloadCore
import Testing

@testable import AuthloadWire

@Suite("Response parser")
struct HTTPResponseParserTests {
    @Test("reads status, reason, headers in order and a Content-Length body")
    func contentLength() throws {
        let outcome = parseResponses(
            wire(
                "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nSet-Cookie: a=1\r\nSet-Cookie: b=2\r\nContent-Length: 5\r\n\r\nhello"
            ))
        #expect(outcome.error == nil)
        let response = try #require(outcome.events.first?.response)
        #expect(response.status == 200)
        #expect(response.reason == "OK")
        #expect(response.headers["content-type"] == "text/plain")
        #expect(response.headers.values(of: "Set-Cookie") == ["a=1", "b=2"])
        #expect(response.headers.fields.map(\.name) == ["Content-Type", "Set-Cookie", "Set-Cookie", "Content-Length"])
        #expect(response.body == wire("hello"))
        #expect(outcome.events.first?.keepAlive == true)
    }

    @Test(
        "accepts HTTP/1.0, a missing or empty reason and a reason with spaces",
        arguments: [
            ("HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n", 200, "OK"),
            ("HTTP/1.1 404 \r\nContent-Length: 0\r\n\r\n", 404, ""),
            ("HTTP/1.1 503\r\nContent-Length: 0\r\n\r\n", 503, ""),
            ("HTTP/1.1 401 Unauthorized by policy\r\nContent-Length: 0\r\n\r\n", 401, "Unauthorized by policy"),
            ("HTTP/1.1 200 OK\nContent-Length: 0\n\n", 200, "OK"),
            ("\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", 200, "OK"),
            ("HTTP/1.2 299 Future\r\nContent-Length: 0\r\n\r\n", 299, "Future")
        ])
    func statusLines(message: String, status: Int, reason: String) throws {
        let outcome = parseResponses(wire(message))
        let response = try #require(outcome.events.first?.response, "\(String(describing: outcome.error))")
        #expect(response.status == status)
        #expect(response.reason == reason)
    }

    @Test("decodes chunked bodies, ignoring chunk extensions and consuming trailers")
    func chunked() throws {
        let message = """
            HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n\
            5;name=value;flag\r\nhello\r\n\
            7 ; ext="quoted"\r\n, world\r\n\
            000\r\nExpires: never\r\nChecksum: abc\r\n\r\n
            """
        let outcome = parseResponses(wire(message + "HTTP/1.1 204 No Content\r\n\r\n"))
        #expect(outcome.error == nil)
        #expect(outcome.events.count == 2)
        let response = try #require(outcome.events.first?.response)
        #expect(response.body == wire("hello, world"))
        #expect(response.headers["Expires"] == nil, "trailers are consumed, not merged")
        #expect(outcome.events.last?.response?.status == 204)
    }

    @Test("reads a chunked body whose sizes use upper- and lower-case hex")
    func chunkSizesInHex() throws {
        let body = [UInt8](repeating: 0x61, count: 0x1aF)
        let message = wire("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1aF\r\n") + body + wire("\r\n0\r\n\r\n")
        let response = try #require(parseResponses(message).events.first?.response)
        #expect(response.body == body)
    }

    @Test(
        "gives no body to HEAD, 204 and 304 responses even when they carry framing headers",
        arguments: [
            ("HEAD", "HTTP/1.1 200 OK\r\nContent-Length: 1234\r\n\r\n"),
            ("HEAD", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"),
            ("GET", "HTTP/1.1 204 No Content\r\nContent-Length: 10\r\n\r\n"),
            ("GET", "HTTP/1.1 304 Not Modified\r\nContent-Length: 99\r\nETag: \"x\"\r\n\r\n"),
            ("CONNECT", "HTTP/1.1 200 Connection Established\r\n\r\n")
        ])
    func noBodyByRule(method: String, head: String) throws {
        // The next response follows at once: reading a body here would swallow it.
        let next = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
        let outcome = parseResponses(wire(head + next), methods: [method, "GET"])
        #expect(outcome.error == nil)
        // A 2xx to CONNECT makes the connection a tunnel: what follows is not parsed as HTTP.
        #expect(outcome.events.count == (method == "CONNECT" ? 1 : 2))
        #expect(outcome.events.first?.response?.body == [])
        if method != "CONNECT" { #expect(outcome.events.last?.response?.body == wire("ok")) }
    }

    @Test("skips interim 1xx responses and returns the final one")
    func interimResponses() throws {
        let message =
            "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a.css>\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 0\r\n\r\n"
        let outcome = parseResponses(wire(message), methods: ["POST"])
        #expect(outcome.events.map { $0.response?.status } == [201])
    }

    @Test("returns a 101 as final and hands over the bytes after it")
    func upgrade() throws {
        var parser = HTTPResponseParser()
        parser.expectResponse(toMethod: "GET")
        parser.feed(
            wire("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n") + [0x81, 0x02, 0x68, 0x69])
        let event = try parser.next()
        #expect(event.response?.status == 101)
        #expect(event.keepAlive == false)
        #expect(parser.isUpgraded)
        #expect(try parser.next() == .needMoreData)
        parser.feed([0x88, 0x00])
        #expect(parser.takeUnparsedBytes() == [0x81, 0x02, 0x68, 0x69, 0x88, 0x00])
    }

    @Test("completes a close-delimited body at end of stream and marks it not reusable")
    func closeDelimited() throws {
        var parser = HTTPResponseParser()
        parser.expectResponse(toMethod: "GET")
        parser.feed(wire("HTTP/1.0 200 OK\r\nContent-Type: text/html\r\n\r\n<html>"))
        #expect(try parser.next() == .needMoreData)
        parser.feed(wire("</html>"))
        #expect(try parser.next() == .needMoreData)
        parser.endOfStream()
        let event = try parser.next()
        #expect(event.response?.body == wire("<html></html>"))
        #expect(event.keepAlive == false)
        #expect(try parser.next() == .endOfStream)
        #expect(parser.pendingResponseCount == 0)
    }

    @Test("reads a body close-delimited when Transfer-Encoding does not end in chunked")
    func unknownTransferCodingIsCloseDelimited() throws {
        let outcome = parseResponses(wire("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\nxyz"), endOfStream: true)
        #expect(outcome.events.first?.response?.body == wire("xyz"))
        #expect(outcome.events.first?.keepAlive == false)
    }

    @Test("reports a clean end of stream between responses, also with a response still expected")
    func cleanEndOfStream() throws {
        var parser = HTTPResponseParser()
        parser.expectResponse(toMethod: "GET")
        parser.endOfStream()
        #expect(try parser.next() == .endOfStream)
        #expect(parser.pendingResponseCount == 1, "the transport decides whether to retry")
        parser.feed(wire("HTTP/1.1 200 OK\r\n"))
        #expect(try parser.next() == .endOfStream, "bytes after the end are ignored")
    }

    @Test("parses pipelined responses from one buffer in order, keeping leftover bytes")
    func pipelined() throws {
        let stream = """
            HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\none\
            HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\n\
            HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nthree\r\n0\r\n\r\n\
            HTTP/1.1 404 Not Found\r\nContent-Length: 4\r\n\r\nfour\
            HTTP/1.1 200 OK\r\nContent-Len
            """
        var parser = HTTPResponseParser()
        for method in ["GET", "HEAD", "GET", "GET", "GET"] { parser.expectResponse(toMethod: method) }
        parser.feed(wire(stream))
        var bodies: [String] = []
        while case .response(let response, _) = try parser.next() {
            bodies.append(String(decoding: response.body, as: UTF8.self))
        }
        #expect(bodies == ["one", "", "three", "four"])
        #expect(parser.pendingResponseCount == 1)
        #expect(parser.hasReceivedBytes, "the fifth response has started")
        parser.feed(wire("gth: 4\r\n\r\nfive"))
        #expect(try parser.next().response?.body == wire("five"))
        #expect(!parser.hasReceivedBytes)
    }

    @Test("turns hasReceivedBytes on with the first byte of each response")
    func timeToFirstByte() throws {
        var parser = HTTPResponseParser()
        parser.expectResponse(toMethod: "GET")
        #expect(!parser.hasReceivedBytes)
        parser.feed(wire("H"))
        #expect(parser.hasReceivedBytes)
        #expect(try parser.next() == .needMoreData)
        #expect(parser.hasReceivedBytes)
        parser.feed(wire("TTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\n"))
        #expect(try parser.next() == .needMoreData)
        #expect(parser.hasReceivedBytes)
        parser.feed(wire("x"))
        #expect(try parser.next().response?.body == wire("x"))
        #expect(!parser.hasReceivedBytes, "the next response has not started")
    }

    @Test("accepts bytes from an UnsafeRawBufferPointer, as a socket read delivers them")
    func rawBufferFeeding() throws {
        var parser = HTTPResponseParser()
        let bytes = wire("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi")
        bytes.withUnsafeBytes { parser.feed($0) }
        #expect(try parser.next().response?.body == wire("hi"))
    }

    @Test("accepts repeated identical Content-Length values")
    func repeatedContentLength() throws {
        let outcome = parseResponses(wire("HTTP/1.1 200 OK\r\nContent-Length: 2, 2\r\nContent-Length: 2\r\n\r\nhi"))
        #expect(outcome.events.first?.response?.body == wire("hi"))
    }

    @Test("keeps a large body intact across many small reads and many pipelined responses")
    func largeBodies() throws {
        let body = (0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        var stream: [UInt8] = []
        for _ in 0..<5 {
            stream += wire("HTTP/1.1 200 OK\r\nContent-Length: \(body.count)\r\n\r\n") + body
            stream += wire("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n30d40\r\n") + body + wire("\r\n0\r\n\r\n")
        }
        let outcome = parseResponses(stream, pieces: pieces(stream.count, size: 1447))
        #expect(outcome.error == nil)
        #expect(outcome.events.count == 10)
        #expect(outcome.events.allSatisfy { $0.response?.body == body })
    }

    @Test("keeps throwing the first error")
    func stickyError() throws {
        var parser = HTTPResponseParser()
        parser.feed(wire("HTTP/9.9 200 OK\r\n\r\n"))
        let first = #expect(throws: HTTPParseError.self) { try parser.next() }
        parser.feed(wire("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"))
        let second = #expect(throws: HTTPParseError.self) { try parser.next() }
        #expect(first == second)
    }
}
