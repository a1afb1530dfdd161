import AuthloadCore
import Testing

@testable import AuthloadWire

/// A byte stream and how to read it, for checking that the way bytes arrive never changes the result.
struct StreamCase: Sendable, CustomTestStringConvertible {
    var name: String
    var bytes: [UInt8]
    var methods: [String] = []
    var endOfStream = false
    var testDescription: String { name }

    static let responses: [StreamCase] = [
        .init(
            name: "Content-Length body",
            bytes: wire("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 12\r\n\r\nhello, world")),
        .init(
            name: "chunked with extensions and trailers",
            bytes: wire(
                "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4;a=b\r\nWiki\r\n5\r\npedia\r\nE ; x\r\n in\r\n\r\nchunks.\r\n0\r\nT: v\r\n\r\n"
            )),
        .init(name: "bare LF line endings", bytes: wire("HTTP/1.1 200 OK\nTransfer-Encoding: chunked\n\n3\nabc\n0\n\n")),
        .init(name: "close-delimited HTTP/1.0", bytes: wire("HTTP/1.0 200 OK\r\nServer: x\r\n\r\nuntil the end"), endOfStream: true),
        .init(
            name: "HEAD, 204, 304, 100 then 200, pipelined",
            bytes: wire(
                "HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\n"
                    + "HTTP/1.1 204 No Content\r\n\r\n"
                    + "HTTP/1.1 304 Not Modified\r\nETag: \"a\"\r\n\r\n"
                    + "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
            ), methods: ["HEAD", "GET", "GET", "POST"]),
        .init(
            name: "101 with frames after it", bytes: wire("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n") + [0x81, 0x00]),
        .init(
            name: "empty lines before a response, then end of stream", bytes: wire("\r\n\nHTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nx"),
            endOfStream: true)
    ]

    static let requests: [StreamCase] = [
        .init(name: "GET", bytes: wire("GET /a?b=c HTTP/1.1\r\nHost: h\r\nAccept: */*\r\n\r\n")),
        .init(name: "form POST", bytes: wire("POST /login HTTP/1.1\r\nHost: h\r\nContent-Length: 15\r\n\r\nuser=a&pass=b%2")),
        .init(
            name: "chunked PUT with trailers",
            bytes: wire(
                "PUT /x HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n2;e\r\nab\r\n1\r\nc\r\n0\r\nX: y\r\n\r\n"
            )),
        .init(
            name: "pipelined, then end of stream",
            bytes: wire(
                "GET /1 HTTP/1.1\r\nHost: h\r\n\r\nPOST /2 HTTP/1.1\r\nHost: h\r\nContent-Length: 1\r\n\r\nzHEAD /3 HTTP/1.0\r\n\r\n"
            ), endOfStream: true)
    ]
}

@Suite("Incremental feeding")
struct IncrementalFeedingTests {
    @Test("gives the same responses for a split at every offset and for byte-at-a-time feeding", arguments: StreamCase.responses)
    func responsesAtEverySplit(_ stream: StreamCase) throws {
        let whole = parseResponses(stream.bytes, methods: stream.methods, endOfStream: stream.endOfStream)
        #expect(whole.error == nil)
        #expect(!whole.events.isEmpty)
        for split in 0...stream.bytes.count {
            let outcome = parseResponses(
                stream.bytes, methods: stream.methods, pieces: pieces(stream.bytes.count, splitAt: split), endOfStream: stream.endOfStream
            )
            #expect(outcome == whole, "split at \(split)")
        }
        let byByte = parseResponses(
            stream.bytes, methods: stream.methods, pieces: pieces(stream.bytes.count, size: 1), endOfStream: stream.endOfStream
        )
        #expect(byByte == whole)
    }

    @Test("gives the same requests for a split at every offset and for byte-at-a-time feeding", arguments: StreamCase.requests)
    func requestsAtEverySplit(_ stream: StreamCase) throws {
        let whole = parseRequests(stream.bytes, endOfStream: stream.endOfStream)
        #expect(whole.error == nil)
        #expect(!whole.events.isEmpty)
        for split in 0...stream.bytes.count {
            let outcome = parseRequests(stream.bytes, pieces: pieces(stream.bytes.count, splitAt: split), endOfStream: stream.endOfStream)
            #expect(outcome == whole, "split at \(split)")
        }
        let byByte = parseRequests(stream.bytes, pieces: pieces(stream.bytes.count, size: 1), endOfStream: stream.endOfStream)
        #expect(byByte == whole)
    }

    @Test("reports the first byte of a response as soon as it is fed", arguments: StreamCase.responses)
    func firstByteIsSeenAtOnce(_ stream: StreamCase) throws {
        var parser = HTTPResponseParser()
        for method in stream.methods { parser.expectResponse(toMethod: method) }
        #expect(!parser.hasReceivedBytes)
        parser.feed(stream.bytes[..<1])
        #expect(parser.hasReceivedBytes)
        _ = try parser.next()
        #expect(parser.hasReceivedBytes || stream.bytes[0] == 0x0D || stream.bytes[0] == 0x0A)
    }

    @Test("delivers every pipelined response exactly once however reads are sized", arguments: [1, 2, 3, 7, 64, 1000, 4096])
    func pipelinedAtReadSizes(readSize: Int) throws {
        var stream: [UInt8] = []
        var expected: [[UInt8]] = []
        for index in 0..<200 {
            let body = wire(String(repeating: "r\(index)", count: index % 13))
            expected.append(body)
            stream +=
                index.isMultiple(of: 2)
                ? wire("HTTP/1.1 200 OK\r\nContent-Length: \(body.count)\r\n\r\n") + body
                : wire("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
                    + (body.isEmpty ? [] : wire(String(body.count, radix: 16) + "\r\n") + body + wire("\r\n")) + wire("0\r\n\r\n")
        }
        let outcome = parseResponses(stream, pieces: pieces(stream.count, size: readSize))
        #expect(outcome.error == nil)
        #expect(outcome.events.map { $0.response?.body } == expected)
    }

    /// A head's fields are copied out when the head is complete, so its first lines must survive the buffer dropping
    /// what was consumed before them: here a 5,000-byte body, which the next read's compaction would move out.
    @Test("a head read line by line after a large body keeps every field", arguments: [1, 2, 5, 17])
    func headAfterLargeBody(readSize: Int) throws {
        let first = wire("HTTP/1.1 200 OK\r\nContent-Length: 5000\r\n\r\n") + [UInt8](repeating: 0x61, count: 5000)
        let second = wire("HTTP/1.1 201 Created\r\nServer: nginx\r\nX-Trace:  a b \r\nSet-Cookie: s=1\r\nContent-Length: 2\r\n\r\nok")
        // The first response, the second's status line and first field arrive together; the rest comes in small reads.
        let together = first.count + "HTTP/1.1 201 Created\r\nServer: nginx\r\n".utf8.count
        let rest = pieces(first.count + second.count - together, size: readSize).map { $0.lowerBound + together..<$0.upperBound + together }
        let outcome = parseResponses(first + second, pieces: [0..<together] + rest)
        #expect(outcome.error == nil)
        let response = try #require(outcome.events.last?.response)
        #expect(response.status == 201)
        #expect(
            response.headers.fields == [
                HTTPField("Server", "nginx"), HTTPField("X-Trace", "a b"), HTTPField("Set-Cookie", "s=1"), HTTPField("Content-Length", "2")
            ])
        #expect(response.body == wire("ok"))
    }
}
