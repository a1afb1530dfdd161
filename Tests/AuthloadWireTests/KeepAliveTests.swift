import AuthloadCore
import Testing

@testable import AuthloadWire

@Suite("Keep-alive decisions")
struct KeepAliveTests {
    struct ResponseCase: Sendable, CustomTestStringConvertible {
        var head: String
        var method = "GET"
        var body = ""
        var keepAlive: Bool
        var testDescription: String { "\(method) → \(head.split(separator: "\r\n").joined(separator: " | "))" }
    }

    static let responses: [ResponseCase] = [
        .init(head: "HTTP/1.1 200 OK\r\nContent-Length: 0", keepAlive: true),
        .init(head: "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0", keepAlive: false),
        .init(head: "HTTP/1.1 200 OK\r\nConnection: Keep-Alive, CLOSE\r\nContent-Length: 0", keepAlive: false),
        .init(head: "HTTP/1.1 200 OK\r\nConnection: upgrade\r\nConnection: close\r\nContent-Length: 0", keepAlive: false),
        .init(head: "HTTP/1.1 200 OK\r\nConnection: closed\r\nContent-Length: 0", keepAlive: true),
        .init(head: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked", body: "0\r\n\r\n", keepAlive: true),
        .init(head: "HTTP/1.1 204 No Content", keepAlive: true),
        .init(head: "HTTP/1.1 304 Not Modified\r\nConnection: close", keepAlive: false),
        .init(head: "HTTP/1.1 200 OK\r\nContent-Length: 10", method: "HEAD", keepAlive: true),
        .init(head: "HTTP/1.0 200 OK\r\nContent-Length: 0", keepAlive: false),
        .init(head: "HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 0", keepAlive: true),
        .init(head: "HTTP/1.0 200 OK\r\nConnection: keep-alive, close\r\nContent-Length: 0", keepAlive: false),
        .init(head: "HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nTransfer-Encoding: chunked", body: "0\r\n\r\n", keepAlive: false),
        .init(head: "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nTransfer-Encoding: chunked", body: "0\r\n\r\n", keepAlive: false),
        .init(head: "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade", keepAlive: false),
        .init(head: "HTTP/1.1 200 Connection Established", method: "CONNECT", keepAlive: false),
        .init(head: "HTTP/1.1 407 Proxy Authentication Required\r\nContent-Length: 0", method: "CONNECT", keepAlive: true)
    ]

    @Test("follow the version, Connection tokens and framing of each response", arguments: responses)
    func responseKeepAlive(_ testCase: ResponseCase) throws {
        let outcome = parseResponses(wire(testCase.head + "\r\n\r\n" + testCase.body), methods: [testCase.method])
        let event = try #require(outcome.events.first, "\(String(describing: outcome.error))")
        #expect(event.keepAlive == testCase.keepAlive)
    }

    @Test(
        "never reuse a connection whose body ended with the connection",
        arguments: [
            "HTTP/1.1 200 OK", "HTTP/1.0 200 OK\r\nConnection: keep-alive", "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip"
        ])
    func closeDelimitedIsNotReusable(head: String) throws {
        let outcome = parseResponses(wire(head + "\r\n\r\nbody"), endOfStream: true)
        let event = try #require(outcome.events.first)
        #expect(event.response?.body == wire("body"))
        #expect(event.keepAlive == false)
    }

    @Test(
        "follow the version and Connection tokens of each request",
        arguments: [
            ("GET / HTTP/1.1\r\nHost: h", true),
            ("GET / HTTP/1.1\r\nHost: h\r\nConnection: close", false),
            ("GET / HTTP/1.1\r\nHost: h\r\nConnection: TE, Close", false),
            ("GET / HTTP/1.0", false),
            ("GET / HTTP/1.0\r\nConnection: Keep-Alive", true),
            ("GET / HTTP/1.0\r\nConnection: keep-alive\r\nConnection: close", false),
            ("POST / HTTP/1.0\r\nConnection: keep-alive\r\nTransfer-Encoding: chunked\r\n\r\n0", false)
        ])
    func requestKeepAlive(head: String, keepAlive: Bool) throws {
        let outcome = parseRequests(wire(head + "\r\n\r\n"))
        let event = try #require(outcome.events.first, "\(String(describing: outcome.error))")
        #expect(event.keepAlive == keepAlive)
    }
}
