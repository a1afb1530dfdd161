import AuthloadCore
import Testing

@testable import AuthloadTransport

/// The HTTP server connection's decisions, fed bytes with no socket.
@Suite("HTTP server connection state")
struct HTTPServerConnectionStateTests {
    static func feed(_ state: inout HTTPServerConnectionState, _ text: String) {
        Array(text.utf8).withUnsafeBytes { state.received($0) }
    }

    static func served(_ next: HTTPServerConnectionState.Next) -> HTTPRequest? {
        if case .serve(let request) = next { request } else { nil }
    }

    static func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

    @Test("pipelined requests are served one at a time, in the order they came")
    func pipelined() throws {
        var state = HTTPServerConnectionState()
        Self.feed(&state, "GET /first HTTP/1.1\r\nHost: a\r\n\r\nGET /second HTTP/1.1\r\nHost: a\r\n\r\n")
        #expect(try #require(Self.served(state.next())).path == "/first")
        #expect(state.next() == .wait, "the second waits for the first one's answer")
        let answer = Self.text(state.answer(HTTPResponse(status: 200, body: Array("one".utf8))))
        #expect(answer.hasPrefix("HTTP/1.1 200") && answer.hasSuffix("\r\n\r\none"))
        #expect(!state.closing)
        #expect(try #require(Self.served(state.next())).path == "/second")
        _ = state.answer(HTTPResponse(status: 204))
        #expect(state.next() == .wait)
    }

    @Test("a request that asks to close, or an HTTP/1.0 one, is the connection's last")
    func lastRequest() throws {
        var state = HTTPServerConnectionState()
        Self.feed(&state, "GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\nGET /never HTTP/1.1\r\nHost: a\r\n\r\n")
        _ = try #require(Self.served(state.next()))
        #expect(Self.text(state.answer(HTTPResponse(status: 200))).lowercased().contains("connection: close"))
        #expect(state.closing)
        #expect(state.next() == .wait, "nothing after the last answer is served")

        var old = HTTPServerConnectionState()
        Self.feed(&old, "GET / HTTP/1.0\r\n\r\n")
        _ = try #require(Self.served(old.next()))
        _ = old.answer(HTTPResponse(status: 200))
        #expect(old.closing)
    }

    @Test("the answer to HEAD has the length of the body but not the body")
    func head() throws {
        var state = HTTPServerConnectionState()
        Self.feed(&state, "HEAD / HTTP/1.1\r\nHost: a\r\n\r\n")
        _ = try #require(Self.served(state.next()))
        let answer = Self.text(state.answer(HTTPResponse(status: 200, body: Array("hello".utf8))))
        #expect(answer.lowercased().contains("content-length: 5"))
        #expect(answer.hasSuffix("\r\n\r\n"))
    }

    @Test("a request the parser refuses gets the error's status and closes the connection")
    func refused() {
        var state = HTTPServerConnectionState()
        Self.feed(&state, "GET / HTTP/1.1\r\nHost: a\r\nContent-Length: nine\r\n\r\n")
        guard case .refuse(let bytes) = state.next() else {
            Issue.record("expected a refusal")
            return
        }
        #expect(Self.text(bytes).hasPrefix("HTTP/1.1 400"))
        #expect(state.closing)
        #expect(state.next() == .wait)
    }

    @Test("an upgrade request ends HTTP, and the bytes behind it are the client's first frames")
    func upgrade() throws {
        var state = HTTPServerConnectionState()
        let request =
            "GET /ws HTTP/1.1\r\nHost: a\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
        Self.feed(&state, request)
        Array([0x81, 0x80, 1, 2, 3, 4] as [UInt8]).withUnsafeBytes { state.received($0) }
        guard case .upgrade(let upgrade) = state.next() else {
            Issue.record("expected an upgrade")
            return
        }
        #expect(upgrade.path == "/ws")
        #expect(state.takeLeftover() == [0x81, 0x80, 1, 2, 3, 4])
        #expect(state.next() == .wait)
    }

    @Test("a served request that is never answered holds every later one (a silent server)")
    func silent() throws {
        var state = HTTPServerConnectionState()
        Self.feed(&state, "GET /a HTTP/1.1\r\nHost: a\r\n\r\nGET /b HTTP/1.1\r\nHost: a\r\n\r\n")
        _ = try #require(Self.served(state.next()))
        #expect(state.isServing)
        for _ in 0..<3 { #expect(state.next() == .wait) }
    }
}

/// How a server connection tells HTTP/2 with prior knowledge from HTTP/1.1 by its first bytes.
@Suite("HTTP server connection state: HTTP/2 preface")
struct HTTPServerPrefaceTests {
    static let preface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"

    @Test("the preface, cut anywhere, hands the connection to HTTP/2 with every byte read so far")
    func preface() {
        for cut in 1..<Self.preface.utf8.count {
            var state = HTTPServerConnectionState(detectsHTTP2: true)
            let bytes = Array(Self.preface.utf8) + [0, 0, 0, 4]
            bytes[..<cut].withUnsafeBytes { state.received($0) }
            #expect(state.next() == .wait, "\(cut) bytes of the preface say nothing yet")
            bytes[cut...].withUnsafeBytes { state.received($0) }
            #expect(state.next() == .http2(bytes))
            #expect(state.next() == .wait)
        }
    }

    @Test("a request that starts as the preface does but is not it is served as HTTP/1.1")
    func notThePreface() throws {
        var state = HTTPServerConnectionState(detectsHTTP2: true)
        HTTPServerConnectionStateTests.feed(&state, "P")
        #expect(state.next() == .wait)
        HTTPServerConnectionStateTests.feed(&state, "UT /a HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n")
        #expect(try #require(HTTPServerConnectionStateTests.served(state.next())).method == "PUT")
    }

    @Test("without detection the preface is HTTP/1.1 the parser refuses")
    func notDetected() {
        var state = HTTPServerConnectionState()
        HTTPServerConnectionStateTests.feed(&state, Self.preface)
        guard case .refuse = state.next() else {
            Issue.record("the preface was not refused as HTTP/1.1")
            return
        }
    }
}
