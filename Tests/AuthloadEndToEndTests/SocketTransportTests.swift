import AuthloadCore
import AuthloadTransport
import Glibc
import Testing

/// A service that answers every request from a closure, for transport tests.
private struct ClosureService: HTTPService {
    let reply: @Sendable (HTTPRequest) -> ServiceReply
    func respond(to request: HTTPRequest) -> ServiceReply { reply(request) }
}

@Suite("Socket transport over loopback", .timeLimit(.minutes(1)))
struct SocketTransportTests {
    func withServer(
        _ reply: @escaping @Sendable (HTTPRequest) -> ServiceReply,
        _ body: (any HTTPClient) async throws -> Void
    ) async throws {
        let group = try EventLoopGroup(loops: 2)
        defer { group.shutdown() }
        let server = try HTTPServer(group: group, port: 0, service: ClosureService(reply: reply))
        defer { server.close() }
        let client = SocketTransport(group: group).makeClient(for: Endpoint(host: "127.0.0.1", port: server.port))
        defer { client.shutdown() }
        try await body(client)
    }

    @Test("keeps one connection alive across a client's requests and times each")
    func keepAlive() async throws {
        try await withServer({ request in ServiceReply(HTTPResponse(status: 200, body: Array(request.target.utf8))) }) { client in
            let first = try await client.execute(HTTPRequest(method: "GET", target: "/a"), timeout: .seconds(5))
            let second = try await client.execute(HTTPRequest(method: "GET", target: "/b"), timeout: .seconds(5))
            #expect(first.body == Array("/a".utf8))
            #expect(second.body == Array("/b".utf8))
            #expect(!first.timing.reusedConnection)
            #expect(second.timing.reusedConnection)
            #expect(second.timing.connect == .zero)
            #expect(first.timing.tlsHandshake == .zero, "plain TCP has no handshake to time")
            #expect(second.timing.tlsHandshake == .zero)
            #expect(first.timing.total >= first.timing.timeToFirstByte)
        }
    }

    @Test("a request queued while its connect is under way goes out when the connect completes, once")
    func connectUnderWay() async throws {
        let listener = try RawListener(backlog: 0)
        defer { listener.close() }
        // Takes the listener's one slot: the kernel drops the client's SYN until it is accepted, so the client's connect
        // is still under way when its request is queued, and its first try at writing the request takes nothing.
        let filler = try RawSocket.connect(port: listener.port)
        defer { filler.close() }
        let group = try EventLoopGroup(loops: 1)
        defer { group.shutdown() }
        let client = SocketTransport(group: group).makeClient(for: Endpoint(host: "127.0.0.1", port: listener.port))
        defer { client.shutdown() }
        let before = OpenSockets.httpConnections
        async let response = client.execute(HTTPRequest(method: "GET", target: "/late"), timeout: .seconds(10))
        for _ in 0..<500 where OpenSockets.httpConnections == before { try await Task.sleep(for: .milliseconds(10)) }
        try #require(OpenSockets.httpConnections > before, "the client never connected")

        let extra = Locked<[UInt8]?>(nil)
        try await offPool { [fd = listener.fd] in _ = Glibc.close(accept(fd, nil, nil)) }
        // The SYN the kernel sends again (after about a second) now completes the connect.
        try await listener.serveOne({ request in
            Array("HTTP/1.1 200 OK\r\nContent-Length: \(request.target.utf8.count)\r\n\r\n\(request.target)".utf8)
        }) { socket in
            // A request written twice would follow the first: wait a moment for anything more.
            var timeout = timeval(tv_sec: 0, tv_usec: 300_000)
            setsockopt(socket.fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            extra.withLock { $0 = socket.read() }
            socket.close()
        }
        let answered = try await response
        #expect(answered.body == Array("/late".utf8))
        #expect(answered.timing.connect > .milliseconds(500), "the connect waited for the SYN to be sent again")
        #expect(extra.withLock { $0 } == [], "the request went out once")
    }

    @Test("a response slower than the timeout fails with a timeout, and the client recovers")
    func responseTimeout() async throws {
        try await withServer({ request in
            ServiceReply(HTTPResponse(status: 200), after: request.target == "/slow" ? .seconds(3) : .zero)
        }) { client in
            await #expect(throws: TransportError(.timeout)) {
                try await client.execute(HTTPRequest(method: "GET", target: "/slow"), timeout: .milliseconds(100))
            }
            let fast = try await client.execute(HTTPRequest(method: "GET", target: "/fast"), timeout: .seconds(5))
            #expect(fast.status == 200)
            #expect(!fast.timing.reusedConnection, "the timed-out connection was closed, not reused")
        }
    }

    @Test("a server that closes after each response is followed on a fresh connection")
    func connectionClose() async throws {
        try await withServer({ _ in
            var response = HTTPResponse(status: 200, body: Array("bye".utf8))
            response.headers.add("Connection", "close")
            return ServiceReply(response)
        }) { client in
            for _ in 0..<3 {
                let response = try await client.execute(
                    HTTPRequest(method: "POST", target: "/", body: Array("x".utf8)), timeout: .seconds(5))
                #expect(response.body == Array("bye".utf8))
            }
        }
    }

    @Test("a reset instead of a response is a transport error")
    func reset() async throws {
        try await withServer({ _ in ServiceReply(failure: TransportError(.connectionReset)) }) { client in
            do {
                _ = try await client.execute(HTTPRequest(method: "GET", target: "/"), timeout: .seconds(5))
                Issue.record("expected a failure")
            } catch let error as TransportError {
                #expect([.connectionReset, .closed].contains(error.kind), "\(error)")
            }
        }
    }

    @Test("a cancelled request ends at once with a cancellation")
    func cancellation() async throws {
        try await withServer({ _ in ServiceReply(HTTPResponse(status: 200), after: .seconds(30)) }) { client in
            let task = Task { try await client.execute(HTTPRequest(method: "GET", target: "/"), timeout: .seconds(60)) }
            task.cancel()
            await #expect(throws: (any Error).self) { try await task.value }
        }
    }
}
