import AuthloadCore
import CSystem
import Testing

@testable import AuthloadTransport

/// The HTTP client connection's shell on an embedded loop over a scripted stream: what it writes and when, how
/// it reads a response that comes in pieces, and what its timers do between two reads. No socket, no sleep.
@Suite("Client connection on an embedded loop")
struct ClientConnectionTests {
    static let request = "GET /login HTTP/1.1\r\nHost: example.test\r\n\r\n"

    /// A connection, its loop and its stream, and how often it told its owner it closed.
    final class Harness {
        let loop: EmbeddedLoop
        let stream: ScriptedStream
        let connection: HTTPClientConnection
        private let closeCount = Counter()

        final class Counter { var value = 0 }

        init(idleTimeout: Duration = .seconds(30), readBufferSize: Int = 64 * 1024) {
            loop = EmbeddedLoop(readBufferSize: readBufferSize)
            stream = ScriptedStream()
            connection = HTTPClientConnection(loop: loop, stream: stream, idleTimeout: idleTimeout) { [closeCount] _ in
                closeCount.value += 1
            }
        }

        /// A connection a test leaves open still counts in `OpenSockets`; closed here, it does not.
        deinit { connection.close() }

        var closes: Int { closeCount.value }

        var fd: Int32 { stream.fd }

        /// Sends `request` at the loop's now, runs `script` (which feeds the stream and fires the loop), and
        /// returns the response or throws the failure.
        ///
        /// A request the script leaves unanswered fails with `.other` instead of leaving the test waiting for ever.
        func exchange(
            _ request: String = ClientConnectionTests.request, method: String = "GET", timeout: Duration = .seconds(10),
            connectTimeout: Duration? = nil, script: () -> Void
        ) async throws -> HTTPResponse {
            try await withUnsafeThrowingContinuation { continuation in
                let start = loop.now
                connection.send(
                    PendingRequest(bytes: Array(request.utf8), continuation: continuation), method: method, start: start,
                    deadline: start + timeout, connectDeadline: start + (connectTimeout ?? timeout))
                script()
                if !connection.isIdle && !loop.isClosed(fd) {
                    connection.close(failing: TransportError(.other, "the script left the request unanswered"))
                }
            }
        }

        /// The socket connects (it turns writable) and the stream's handshake, if any, runs.
        func connect() { loop.fireWritable(fd) }

        /// `bytes` arrive at `seconds` after the loop's origin, read in one round.
        func arrive(_ bytes: String, at seconds: Double) {
            loop.advanceTime(to: EmbeddedLoop.at(seconds))
            stream.feed(bytes)
            loop.fireReadable(fd)
        }
    }

    static let readable = EPOLLIN.rawValue
    static let writable = EPOLLOUT.rawValue

    @Test("a request the socket takes in pieces is written whole, waiting for EPOLLOUT between the pieces")
    func partialWrites() async throws {
        let harness = Harness()
        let stream = harness.stream
        let response = try await harness.exchange {
            // Registered for EPOLLOUT while connecting: the connect's end is the socket turning writable.
            #expect(harness.loop.interest[harness.fd] == Self.writable)
            stream.writeWindow = 10
            harness.connect()
            #expect(stream.writeSizes == [10])
            #expect(harness.loop.interest[harness.fd] == Self.readable | Self.writable, "waits for room in the socket")
            stream.writeWindow = 5
            harness.loop.fireWritable(harness.fd)
            #expect(stream.writeSizes == [10, 5])
            stream.writeWindow = nil
            harness.loop.fireWritable(harness.fd)
            #expect(harness.loop.interest[harness.fd] == Self.readable, "all written: only input is of interest")
            harness.arrive("HTTP/1.1 204 No Content\r\n\r\n", at: 0.5)
        }
        #expect(stream.takeWritten() == Self.request)
        #expect(stream.writeSizes.count == 3)
        #expect(response.status == 204)
        #expect(harness.connection.isIdle)
        #expect(harness.closes == 0)
    }

    @Test("a response arriving in pieces over several rounds is answered once complete, timed from its first byte")
    func responseInPieces() async throws {
        let harness = Harness()
        let response = try await harness.exchange {
            harness.connect()
            harness.arrive("HTTP/1.1 200 OK\r\nContent-Le", at: 0.25)
            harness.arrive("ngth: 5\r\n\r\nhe", at: 0.5)
            #expect(!harness.connection.isIdle, "the response is not complete yet")
            harness.arrive("llo", at: 0.75)
        }
        #expect(response.status == 200)
        #expect(response.body == Array("hello".utf8))
        #expect(response.timing.timeToFirstByte == .milliseconds(250))
        #expect(response.timing.total == .milliseconds(750), "stamped with the round that read the last byte")
        #expect(!response.timing.reusedConnection)
    }

    @Test("a response larger than the read buffer is read in pieces within one round")
    func responseInOneRoundOfShortBuffers() async throws {
        let harness = Harness(readBufferSize: 8)
        let body = String(repeating: "x", count: 100)
        let response = try await harness.exchange {
            harness.connect()
            harness.arrive("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n" + body, at: 0.1)
        }
        #expect(response.body == Array(body.utf8))
        #expect(harness.stream.readCount == 18, "140 bytes in one round: 17 full reads of eight, then a short one ends it")
        #expect(harness.stream.unread == 0)
    }

    @Test("a peer that closes mid-body fails the request as a body shorter than its Content-Length")
    func peerClosesMidBody() async throws {
        let harness = Harness()
        let error = await #expect(throws: TransportError.self) {
            try await harness.exchange {
                harness.connect()
                harness.arrive("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nhalf", at: 0.1)
                harness.stream.feedEnd()
                harness.loop.fireReadable(harness.fd)
            }
        }
        #expect(error == .badResponse(.bodyShorterThanContentLength))
        #expect(harness.loop.isClosed(harness.fd))
        #expect(harness.closes == 1)
    }

    @Test("a peer that closes before a byte of the response fails the request as closed before responding")
    func peerClosesBeforeResponding() async throws {
        let harness = Harness()
        let error = await #expect(throws: TransportError.self) {
            try await harness.exchange {
                harness.connect()
                harness.stream.feedEnd()
                harness.loop.fireReadable(harness.fd)
            }
        }
        #expect(error?.kind == .closed)
        #expect(error?.detail == "the server closed the connection before responding")
        #expect(harness.closes == 1)
    }

    @Test("a read that fails mid-response fails the request with the stream's error")
    func readFailsMidResponse() async throws {
        let harness = Harness()
        let reset = TransportError(.connectionReset, "recv: connection reset by peer")
        let error = await #expect(throws: TransportError.self) {
            try await harness.exchange {
                harness.connect()
                harness.arrive("HTTP/1.1 200 OK\r\n", at: 0.1)
                harness.stream.feedFailure(reset)
                harness.loop.fireReadable(harness.fd)
            }
        }
        #expect(error == reset)
        #expect(harness.loop.isClosed(harness.fd))
    }

    @Test("the request timer firing between two reads of a response fails it as an incomplete response, and closes")
    func requestTimeoutBetweenReads() async throws {
        let harness = Harness()
        let error = await #expect(throws: TransportError.self) {
            try await harness.exchange(timeout: .seconds(2)) {
                harness.connect()
                harness.arrive("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhe", at: 1)
                harness.loop.advanceTime(to: EmbeddedLoop.at(2))
                #expect(harness.loop.isClosed(harness.fd), "closed when the timer fired, before the rest arrived")
            }
        }
        #expect(error?.reason == .timedOut(.readingResponse) && error?.detail == TransportError.incompleteDetail)
        #expect(harness.closes == 1)
        #expect(harness.loop.nextTimer == nil, "no timer outlives the connection")
    }

    @Test("a timer that fires between two reads before any deadline re-arms for the request's, and the response completes")
    func earlyTimerBetweenReads() async throws {
        let harness = Harness()
        let response = try await harness.exchange(timeout: .seconds(10), connectTimeout: .seconds(1)) {
            #expect(harness.loop.nextTimer == EmbeddedLoop.at(1), "watching the connect deadline")
            harness.connect()
            harness.arrive("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhe", at: 0.5)
            harness.loop.advanceTime(to: EmbeddedLoop.at(1))
            #expect(!harness.loop.isClosed(harness.fd), "connected in time: the connect deadline no longer applies")
            #expect(harness.loop.nextTimer == EmbeddedLoop.at(10), "re-armed for the request deadline")
            harness.arrive("llo", at: 3)
        }
        #expect(response.body == Array("hello".utf8))
        #expect(response.timing.total == .seconds(3))
    }

    @Test("a connection still connecting at its connect deadline fails the request with a connect timeout")
    func connectTimeout() async throws {
        let harness = Harness()
        let error = await #expect(throws: TransportError.self) {
            try await harness.exchange(timeout: .seconds(10), connectTimeout: .seconds(1)) {
                harness.loop.advanceTime(by: .seconds(1))
            }
        }
        #expect(error?.kind == .connectTimeout)
        #expect(harness.stream.written.isEmpty)
        #expect(harness.loop.isClosed(harness.fd))
    }

    @Test("a kept-alive connection carries the next request on the same socket, then closes when idle too long")
    func keepAliveReuse() async throws {
        let harness = Harness(idleTimeout: .seconds(5))
        let first = try await harness.exchange {
            harness.connect()
            harness.arrive("HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\n1", at: 0.1)
        }
        #expect(harness.stream.takeWritten() == Self.request)
        #expect(harness.loop.nextTimer == EmbeddedLoop.at(5.1), "idle from the response on")
        harness.loop.advanceTime(to: EmbeddedLoop.at(3))
        let second = try await harness.exchange("GET /next HTTP/1.1\r\nHost: example.test\r\n\r\n") {
            // Written at once: no connect, no EPOLLOUT round.
            #expect(harness.stream.takeWritten() == "GET /next HTTP/1.1\r\nHost: example.test\r\n\r\n")
            harness.arrive("HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\n2", at: 3.5)
        }
        #expect(first.body == [UInt8(ascii: "1")] && second.body == [UInt8(ascii: "2")])
        #expect(!first.timing.reusedConnection && second.timing.reusedConnection)
        #expect(second.timing.connect == .zero)
        #expect(harness.closes == 0)
        harness.loop.advanceTime(to: EmbeddedLoop.at(8.4))
        #expect(!harness.loop.isClosed(harness.fd), "idle for 4.9 s of 5")
        harness.loop.advanceTime(to: EmbeddedLoop.at(8.5))
        #expect(harness.loop.isClosed(harness.fd))
        #expect(harness.closes == 1)
    }

    @Test("a kept-alive connection the server had closed fails its next request as stale, for the owner to retry")
    func staleKeepAlive() async throws {
        let harness = Harness()
        _ = try await harness.exchange {
            harness.connect()
            harness.arrive("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", at: 0.1)
        }
        let error = await #expect(throws: TransportError.self) {
            try await harness.exchange {
                harness.stream.feedEnd()
                harness.loop.fireReadable(harness.fd)
            }
        }
        #expect(error?.reason == .staleConnection)
    }

    @Test("a response that says Connection: close is handed over after the socket is closed")
    func connectionClose() async throws {
        let harness = Harness()
        let response = try await harness.exchange {
            harness.connect()
            harness.arrive("HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok", at: 0.1)
        }
        #expect(response.status == 200)
        #expect(harness.loop.isClosed(harness.fd))
        #expect(harness.closes == 1)
        #expect(harness.stream.shutdowns == 1)
    }

    @Test("bytes while no request is in flight close the connection: it cannot be trusted with the next one")
    func unsolicitedBytes() async throws {
        let harness = Harness()
        _ = try await harness.exchange {
            harness.connect()
            harness.arrive("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", at: 0.1)
        }
        harness.arrive("HTTP/1.1 200 OK\r\n", at: 0.2)
        #expect(harness.loop.isClosed(harness.fd))
        #expect(harness.closes == 1)
    }

    @Test("a write that fails fails the request with the write's error")
    func writeFails() async throws {
        let harness = Harness()
        let broken = TransportError(.connectionReset, "send: broken pipe")
        let error = await #expect(throws: TransportError.self) {
            try await harness.exchange {
                harness.stream.writeFailure = broken
                harness.connect()
            }
        }
        #expect(error == broken)
        #expect(harness.loop.isClosed(harness.fd))
    }

    @Test("a TLS stream's handshake is timed: it may want the socket readable before it is done")
    func handshakeSteps() async throws {
        let harness = Harness()
        harness.stream.isSecure = true
        harness.stream.handshakeSteps = [.wouldBlock(interest: Self.readable)]
        let response = try await harness.exchange {
            harness.loop.advanceTime(to: EmbeddedLoop.at(0.1))
            harness.connect()
            #expect(harness.stream.written.isEmpty, "nothing is written before the handshake is done")
            #expect(harness.loop.interest[harness.fd] == Self.readable)
            harness.loop.advanceTime(to: EmbeddedLoop.at(0.3))
            harness.loop.fireReadable(harness.fd)
            #expect(harness.stream.takeWritten() == Self.request)
            harness.arrive("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", at: 0.4)
        }
        #expect(response.timing.connect == .milliseconds(100))
        #expect(response.timing.tlsHandshake == .milliseconds(200))
    }
}
