import AuthloadCore
import Testing

@testable import AuthloadTransport

/// The HTTP client connection's decisions, driven through time by handing it instants: no socket, no sleep.
@Suite("HTTP client connection state")
struct HTTPClientConnectionStateTests {
    typealias State = HTTPClientConnectionState<String>

    /// What an action came to, comparable in an expectation.
    enum Outcome: Equatable {
        case wait, write
        case respond(String, status: Int, close: Bool)
        case fail(String, TransportError)
        case close(reset: Bool)
        case upgrade(String, status: Int, leftover: [UInt8])

        init(_ action: State.Action) {
            switch action {
            case .wait: self = .wait
            case .write: self = .write
            case .respond(let request, let response, let close): self = .respond(request, status: response.status, close: close)
            case .fail(let request, let error): self = .fail(request, error)
            case .close(let reset): self = .close(reset: reset)
            case .upgrade(let request, let response, let leftover):
                self = .upgrade(request, status: response.status, leftover: leftover)
            }
        }
    }

    /// Seconds after an arbitrary origin: the state never reads a clock, so any origin will do.
    static func at(_ seconds: Double) -> MonotonicInstant { MonotonicInstant(nanoseconds: 1_000_000_000_000 + Int64(seconds * 1e9)) }

    static let ok = Array("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok".utf8)

    /// A state with one request sent at 0 s: deadline 10 s, connect deadline 2 s, idle timeout 5 s.
    static func sending(_ request: String = "login") -> (State, Outcome) {
        var state = State(idleTimeout: .seconds(5))
        let action = state.send(request, method: "POST", start: at(0), deadline: at(10), connectDeadline: at(2))
        return (state, Outcome(action))
    }

    /// `sending()`, connected at 0.1 s and secured at `secured`.
    static func open(secure: Bool = false, secured: Double = 0.1) -> State {
        var (state, _) = sending()
        state.connected(at: at(0.1))
        _ = state.secured(at: at(secured), secure: secure)
        return state
    }

    static func feed(_ state: inout State, _ bytes: [UInt8], at seconds: Double) -> State.Action {
        bytes.withUnsafeBytes { state.received($0, at: at(seconds)) }
    }

    @Test("a connection still connecting at its connect deadline fails with a connect timeout that says what to change")
    func connectTimeout() {
        var (state, sent) = Self.sending()
        #expect(sent == .wait)
        #expect(state.timerDue == Self.at(2))
        #expect(
            Outcome(state.timerFired(at: Self.at(2)))
                == .fail("login", TransportError(.timedOut(.connecting), TransportError.unansweredConnectDetail)))
        #expect(state.phase == .closed)
        #expect(state.timerDue == nil)
    }

    @Test("a TLS handshake that never finishes is a connect timeout that names the handshake")
    func handshakeTimeout() {
        var (state, _) = Self.sending()
        state.connected(at: Self.at(0.1))
        #expect(state.phase == .handshaking)
        let failed = Outcome(state.timerFired(at: Self.at(2)))
        #expect(failed == .fail("login", TransportError(.timedOut(.tlsHandshake), "TLS handshake")))
        guard case .fail(_, let error) = failed else { return }
        #expect(error.kind == .connectTimeout, "grouped with the connect timeouts in the error breakdown")
    }

    @Test("a timer that fires before the deadline now current re-arms for it; the request times out at its own deadline")
    func requestTimeout() {
        var state = Self.open()
        #expect(state.timerDue == Self.at(2), "the connect deadline is still armed; moving the timer later costs a cancel")
        #expect(Outcome(state.timerFired(at: Self.at(2))) == .wait)
        #expect(state.timerDue == Self.at(10))
        #expect(Outcome(state.timerFired(at: Self.at(9.999))) == .wait, "a timer early by a hair does not fail the request")
        #expect(Outcome(state.timerFired(at: Self.at(10))) == .fail("login", TransportError(.timedOut(.awaitingResponse))))
    }

    @Test("a response that had begun when the deadline came is told apart from one that never came")
    func trickledTimeout() {
        var state = Self.open()
        #expect(Outcome(Self.feed(&state, Array("HTTP/1.1 200 OK\r\n".utf8), at: 1)) == .wait)
        _ = state.timerFired(at: Self.at(2))
        #expect(
            Outcome(state.timerFired(at: Self.at(10)))
                == .fail("login", TransportError(.timedOut(.readingResponse), TransportError.incompleteDetail)))
    }

    @Test("the marks of a new connection time connect, TLS handshake, first byte and total")
    func timing() throws {
        var state = Self.open(secure: true, secured: 0.3)
        #expect(Outcome(Self.feed(&state, Array(Self.ok.prefix(9)), at: 0.4)) == .wait)
        let action = Self.feed(&state, Array(Self.ok.dropFirst(9)), at: 0.5)
        guard case .respond(let request, let response, let close) = action else {
            Issue.record("expected a response, got \(Outcome(action))")
            return
        }
        #expect(request == "login" && response.status == 200 && response.body == Array("ok".utf8) && !close)
        #expect(response.timing.connect == .milliseconds(100))
        #expect(response.timing.tlsHandshake == .milliseconds(200))
        #expect(response.timing.timeToFirstByte == .milliseconds(400))
        #expect(response.timing.total == .milliseconds(500))
        #expect(!response.timing.reusedConnection)
        #expect(state.isIdle)
    }

    @Test("plain TCP has no handshake: its handshake time is zero")
    func plainHandshakeTime() {
        var state = Self.open(secure: false, secured: 0.3)
        guard case .respond(_, let response, _) = Self.feed(&state, Self.ok, at: 0.5) else {
            Issue.record("expected a response")
            return
        }
        #expect(response.timing.connect == .milliseconds(100))
        #expect(response.timing.tlsHandshake == .zero)
    }

    @Test("an idle connection closes with a reset once idle for its whole timeout, not before")
    func idleTimeout() {
        var state = Self.open()
        _ = Self.feed(&state, Self.ok, at: 0.5)
        #expect(state.timerDue == Self.at(2), "still the earlier deadline")
        #expect(Outcome(state.timerFired(at: Self.at(2))) == .wait)
        #expect(state.timerDue == Self.at(5.5))
        #expect(Outcome(state.timerFired(at: Self.at(5.5))) == .close(reset: true))
        #expect(state.phase == .closed)
    }

    @Test("a request sent on an idle connection is not cut off by the idle deadline it replaced")
    func reuseOutlivesIdleDeadline() {
        var state = Self.open()
        _ = Self.feed(&state, Self.ok, at: 0.5)
        _ = state.timerFired(at: Self.at(2))
        #expect(state.timerDue == Self.at(5.5))
        let sent = state.send("again", method: "GET", start: Self.at(3), deadline: Self.at(13), connectDeadline: Self.at(5))
        #expect(Outcome(sent) == .write)
        #expect(Outcome(state.timerFired(at: Self.at(5.5))) == .wait)
        #expect(state.timerDue == Self.at(13), "a reused connection has no connect deadline")
        guard case .respond(_, let response, _) = Self.feed(&state, Self.ok, at: 6) else {
            Issue.record("expected a response")
            return
        }
        #expect(response.timing.reusedConnection)
        #expect(response.timing.connect == .zero)
        #expect(response.timing.total == .seconds(3))
    }

    @Test("a response stamped before its request's start times as zero, never negative")
    func stampBeforeStart() {
        var state = Self.open()
        _ = Self.feed(&state, Self.ok, at: 0.5)
        // A request started at 3 s whose answer carries an earlier instant (a loop round's wake-up stamp taken another way).
        _ = state.send("again", method: "GET", start: Self.at(3), deadline: Self.at(13), connectDeadline: Self.at(5))
        guard case .respond(_, let response, _) = Self.feed(&state, Self.ok, at: 2.9) else {
            Issue.record("expected a response")
            return
        }
        #expect(response.timing.total == .zero)
        #expect(response.timing.timeToFirstByte == .zero)
    }

    @Test("a kept-alive connection the server had closed fails as stale, to be retried, only before any byte came back")
    func staleConnection() {
        var state = Self.open()
        _ = Self.feed(&state, Self.ok, at: 0.5)
        _ = state.send("again", method: "GET", start: Self.at(1), deadline: Self.at(11), connectDeadline: Self.at(3))
        #expect(Outcome(state.streamEnded(at: Self.at(1.1))) == .fail("again", State.stale))
        #expect(State.stale.reason == .staleConnection && State.stale.kind == .closed)

        var begun = Self.open()
        _ = Self.feed(&begun, Self.ok, at: 0.5)
        _ = begun.send("again", method: "GET", start: Self.at(1), deadline: Self.at(11), connectDeadline: Self.at(3))
        _ = Self.feed(&begun, Array("HTTP/1.1 200".utf8), at: 1.1)
        let ended = Outcome(begun.streamEnded(at: Self.at(1.2)))
        guard case .fail("again", let error) = ended else {
            Issue.record("expected a failure, got \(ended)")
            return
        }
        #expect(error.reason != .staleConnection, "the server had begun to answer: not safe to send again")
    }

    @Test("a new connection that fails is never stale: its request is not sent twice")
    func freshConnectionFailure() {
        var state = Self.open()
        let error = TransportError(.connectionReset)
        #expect(Outcome(state.streamFailed(error)) == .fail("login", error))
    }

    @Test("a response with Connection: close closes the connection; one without a length ends with the stream")
    func closeDelimited() {
        var state = Self.open()
        let closing = Array("HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n".utf8)
        #expect(Outcome(Self.feed(&state, closing, at: 0.5)) == .respond("login", status: 200, close: true))
        #expect(state.phase == .closed && state.timerDue == nil)

        var unframed = Self.open()
        #expect(Outcome(Self.feed(&unframed, Array("HTTP/1.1 200 OK\r\n\r\nuntil the end".utf8), at: 0.5)) == .wait)
        guard case .respond(_, let response, true) = unframed.streamEnded(at: Self.at(0.6)) else {
            Issue.record("expected a response that closes the connection")
            return
        }
        #expect(response.body == Array("until the end".utf8))
    }

    @Test("bytes past Content-Length, and bytes nobody asked for, close the connection")
    func unsolicitedBytes() {
        var state = Self.open()
        #expect(
            Outcome(Self.feed(&state, Self.ok + Array("!".utf8), at: 0.5))
                == .fail("login", .badResponse(.bodyLongerThanContentLength)))

        var idle = Self.open()
        _ = Self.feed(&idle, Self.ok, at: 0.5)
        #expect(Outcome(Self.feed(&idle, Array("HTTP/1.1 200".utf8), at: 1)) == .close(reset: false))
    }

    @Test("a response the parser rejects fails the request with the problem's stable name")
    func malformedResponse() {
        var state = Self.open()
        #expect(
            Outcome(Self.feed(&state, Array("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort".utf8), at: 0.5)) == .wait)
        #expect(
            Outcome(state.streamEnded(at: Self.at(0.6))) == .fail("login", .badResponse(.bodyShorterThanContentLength)))

        var garbled = Self.open()
        #expect(
            Outcome(Self.feed(&garbled, Array("HTTX/1.1 200 OK\r\n\r\n".utf8), at: 0.5))
                == .fail("login", .badResponse(.malformedStatusLine)))
    }

    static let chunkedHead = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"

    @Test("the parser's reason reaches the error: a body past the limit names the limit, a bad chunk is not a long body")
    func parserReasons() {
        // A chunk that alone passes the client's 16 MiB limit: a server that streams without end fails the same way.
        var endless = Self.open()
        let tooLarge = Outcome(Self.feed(&endless, Array("\(Self.chunkedHead)2000000\r\n".utf8), at: 0.5))
        #expect(tooLarge == .fail("login", .badResponse(.bodyTooLarge(limit: 16 * 1024 * 1024))))
        #expect(TransportError.badResponse(.bodyTooLarge(limit: 16_777_216)).detail == "body larger than 16777216 bytes")

        var badSize = Self.open()
        #expect(
            Outcome(Self.feed(&badSize, Array("\(Self.chunkedHead)zz\r\n".utf8), at: 0.5))
                == .fail("login", .badResponse(.invalidChunkSize)))

        var badChunk = Self.open()
        #expect(
            Outcome(Self.feed(&badChunk, Array("\(Self.chunkedHead)2\r\nokXX".utf8), at: 0.5))
                == .fail("login", .badResponse(.malformedChunk)))

        // Cut off inside a chunk: cut short, not shorter than a Content-Length it never had.
        var cut = Self.open()
        _ = Self.feed(&cut, Array("\(Self.chunkedHead)5\r\nhel".utf8), at: 0.5)
        #expect(Outcome(cut.streamEnded(at: Self.at(0.6))) == .fail("login", .badResponse(.cutShort)))
    }

    @Test("the owner closing hands back the request in flight once, and the state then ignores every event")
    func ownerClose() {
        var state = Self.open()
        #expect(state.close() == "login")
        #expect(state.close() == nil)
        #expect(Outcome(state.timerFired(at: Self.at(10))) == .wait)
        #expect(Outcome(state.streamEnded(at: Self.at(10))) == .wait)
        #expect(Outcome(Self.feed(&state, Self.ok, at: 10)) == .wait)
    }

    @Test("the answer to an upgrade hands the socket over with the bytes behind it, and ends HTTP on the connection")
    func upgrade() {
        var state = State(idleTimeout: .seconds(5))
        _ = state.send("websocket", method: "GET", start: Self.at(0), deadline: Self.at(10), connectDeadline: Self.at(2), upgrade: true)
        state.connected(at: Self.at(0.1))
        #expect(Outcome(state.secured(at: Self.at(0.1), secure: false)) == .write)
        let switching = Array("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n".utf8)
        let frame: [UInt8] = [0x81, 0x02, 0x68, 0x69]
        #expect(Outcome(Self.feed(&state, switching + frame, at: 0.3)) == .upgrade("websocket", status: 101, leftover: frame))
        #expect(state.phase == .upgraded && state.timerDue == nil && !state.isIdle)
        #expect(Outcome(state.timerFired(at: Self.at(10))) == .wait, "the opening's deadlines no longer apply")
        #expect(Outcome(state.streamFailed(TransportError(.connectionReset))) == .wait)

        var refused = State(idleTimeout: .seconds(5))
        _ = refused.send("websocket", method: "GET", start: Self.at(0), deadline: Self.at(10), connectDeadline: Self.at(2), upgrade: true)
        refused.connected(at: Self.at(0.1))
        _ = refused.secured(at: Self.at(0.1), secure: false)
        #expect(Outcome(Self.feed(&refused, Array("HTTP/1.1 403 Forbidden\r\n\r\nno".utf8), at: 0.3)) == .wait)
        #expect(
            Outcome(refused.streamEnded(at: Self.at(0.4))) == .upgrade("websocket", status: 403, leftover: []),
            "a refusal delimited by the close still reaches the opening, to be reported as such")
    }
}
