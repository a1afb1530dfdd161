import AuthloadCore
import AuthloadTransport
import AuthloadWire
import Foundation
import Testing

@Suite("WebSocket client and server over loopback", .timeLimit(.minutes(1)))
struct WebSocketLoopbackTests {
    @Test("opens with a timed 101 and the selected sub-protocol, then echoes text and binary")
    func echo() async throws {
        try await WebSocketFixture.with { fixture in
            let socket = try await fixture.open(protocols: ["v11.stomp", "v12.stomp"])
            #expect(socket.handshake.status == 101)
            #expect(socket.subprotocol == "v12.stomp")
            let timing = socket.handshake.timing
            #expect(timing.total > .zero)
            #expect(timing.total >= timing.timeToFirstByte)
            #expect(timing.timeToFirstByte >= timing.connect)
            #expect(!timing.reusedConnection)

            try await socket.send(.text("héllo"))
            #expect(try await socket.receive(timeout: .seconds(5)) == .text("héllo"))
            try await socket.send(.binary([0, 1, 2, 255]))
            #expect(try await socket.receive(timeout: .seconds(5)) == .binary([0, 1, 2, 255]))
            await socket.close(code: 1000, reason: "done", timeout: .seconds(5))
            await fixture.service.events.waitFor("closed 1000")
        }
    }

    @Test("echoes a 1 MB message whole")
    func largeMessage() async throws {
        try await WebSocketFixture.with { fixture in
            let socket = try await fixture.open()
            let payload = (0..<1_048_576).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 8) }
            try await socket.send(.binary(payload))
            #expect(try await socket.receive(timeout: .seconds(10)) == .binary(payload))
            await socket.close(code: 1000, reason: "", timeout: .seconds(5))
        }
    }

    @Test("serves 200 sockets at once on one server, each hearing only its own echo")
    func manySockets() async throws {
        try await WebSocketFixture.with { fixture in
            let echoed = try await withThrowingTaskGroup(of: Bool.self) { group in
                for index in 0..<200 {
                    group.addTask {
                        let socket = try await fixture.open()
                        try await socket.send(.text("socket \(index)"))
                        let reply = try await socket.receive(timeout: .seconds(10))
                        await socket.close(code: 1000, reason: "", timeout: .seconds(5))
                        return reply == .text("socket \(index)")
                    }
                }
                return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
            }
            #expect(echoed == 200)
        }
    }

    @Test("a receive that times out leaves the socket open and usable")
    func receiveTimeout() async throws {
        try await WebSocketFixture.with { fixture in
            let socket = try await fixture.open()
            do {
                _ = try await socket.receive(timeout: .milliseconds(50))
                Issue.record("nothing was sent, so the receive should time out")
            } catch let error as TransportError {
                #expect(error.kind == .timeout)
            }
            try await socket.send(.text("still here"))
            #expect(try await socket.receive(timeout: .seconds(5)) == .text("still here"))
        }
    }

    @Test("a server Close 1011 mid-stream reaches the client after the messages before it")
    func serverClose() async throws {
        try await WebSocketFixture.with { fixture in
            let socket = try await fixture.open()
            try await socket.send(.text("close 1011"))
            #expect(try await socket.receive(timeout: .seconds(5)) == .text("bye"))
            await #expect(throws: WebSocketClosed(code: 1011, reason: "boom")) { try await socket.receive(timeout: .seconds(5)) }
            // Every later call reports the same closure.
            await #expect(throws: WebSocketClosed(code: 1011, reason: "boom")) { try await socket.send(.text("late")) }
            await fixture.service.events.waitFor("closed 1011")
        }
    }

    @Test("a server that drops the connection without a Close is reported as 1006")
    func serverDrop() async throws {
        let listener = try RawListener()
        defer { listener.close() }
        let group = try EventLoopGroup(loops: 1)
        defer { group.shutdown() }
        let client = SocketTransport(group: group).makeClient(for: Endpoint(host: "127.0.0.1", port: listener.port))
        async let served: Void = listener.serveOne({ RawListener.switching($0, frames: [.text("hi")]) }, then: { $0.close() })
        let socket = try await client.openWebSocket(HTTPRequest(method: "GET", target: "/"), protocols: [], timeout: .seconds(5))
        try await served
        #expect(try await socket.receive(timeout: .seconds(5)) == .text("hi"), "a frame in the same packet as the 101 is kept")
        do {
            _ = try await socket.receive(timeout: .seconds(5))
            Issue.record("the socket should have closed")
        } catch let closed as WebSocketClosed {
            #expect(closed.code == 1006)
        }
    }

    @Test("a 101 whose accept key is wrong does not open the socket")
    func badAccept() async throws {
        let listener = try RawListener()
        defer { listener.close() }
        let group = try EventLoopGroup(loops: 1)
        defer { group.shutdown() }
        let client = SocketTransport(group: group).makeClient(for: Endpoint(host: "127.0.0.1", port: listener.port))
        async let served: Void = listener.serveOne(
            { _ in
                Array(
                    "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: bm90IHRoZSBrZXk=\r\n\r\n"
                        .utf8)
            }, then: { $0.close() })
        do {
            _ = try await client.openWebSocket(HTTPRequest(method: "GET", target: "/"), protocols: [], timeout: .seconds(5))
            Issue.record("the handshake should fail")
        } catch let error as TransportError {
            #expect(error.kind == .protocolViolation)
            #expect(error.detail.contains("Sec-WebSocket-Accept"))
        }
        try await served
    }

    @Test("a server that never answers the upgrade fails the open with a timeout")
    func openTimeout() async throws {
        try await withSilentServer(answer: false) { client, _ in
            do {
                _ = try await client.openWebSocket(HTTPRequest(method: "GET", target: "/"), protocols: [], timeout: .milliseconds(200))
                Issue.record("the open should time out")
            } catch let error as TransportError {
                #expect(error.kind == .timeout)
            }
        }
    }

    @Test("cancelling an open that is waiting for its 101 ends it with CancellationError")
    func cancelOpen() async throws {
        try await withSilentServer(answer: false) { client, requestRead in
            let opening = Task {
                try await client.openWebSocket(HTTPRequest(method: "GET", target: "/"), protocols: [], timeout: .seconds(30))
            }
            // Cancelled once the upgrade is on the wire, so it is the wait for the 101 that is cancelled.
            await requestRead.wait()
            opening.cancel()
            await #expect(throws: CancellationError.self) { try await opening.value }
        }
    }

    @Test("a close the server never answers gives up at its timeout and reports 1006")
    func closeTimeout() async throws {
        try await withSilentServer(answer: true) { client, _ in
            let socket = try await client.openWebSocket(HTTPRequest(method: "GET", target: "/"), protocols: [], timeout: .seconds(5))
            let start = ContinuousClock.now
            await socket.close(code: 1000, reason: "", timeout: .milliseconds(100))
            #expect(ContinuousClock.now - start < .seconds(3), "bounded by the close timeout, not by the server")
            do {
                _ = try await socket.receive(timeout: .seconds(1))
                Issue.record("the socket should be closed")
            } catch let closed as WebSocketClosed {
                #expect(closed.code == 1006)
            }
        }
    }

    /// A raw server that accepts one client and then says nothing more: no 101 at all, or a 101 and
    /// then silence (no answer to a Close). It hangs up once the client has. The flag is set once it
    /// has read the upgrade request.
    func withSilentServer(answer: Bool, _ body: (any HTTPClient, AsyncFlag) async throws -> Void) async throws {
        let listener = try RawListener()
        defer { listener.close() }
        let group = try EventLoopGroup(loops: 1)
        defer { group.shutdown() }
        let client = SocketTransport(group: group).makeClient(for: Endpoint(host: "127.0.0.1", port: listener.port))
        let requestRead = AsyncFlag()
        async let served: Void = listener.serveOne(
            { answer ? RawListener.switching($0) : [] },
            then: { socket in
                requestRead.set()
                _ = socket.read()
                socket.close()
            })
        try await body(client, requestRead)
        try await served
    }

    @Test("cancelling a pending receive ends it with CancellationError and keeps later messages")
    func cancelReceive() async throws {
        try await WebSocketFixture.with { fixture in
            let socket = try await fixture.open()
            let pending = Task { try await socket.receive(timeout: .seconds(30)) }
            pending.cancel()
            await #expect(throws: CancellationError.self) { try await pending.value }
            try await socket.send(.text("after"))
            #expect(try await socket.receive(timeout: .seconds(5)) == .text("after"))
        }
    }

    @Test("a service's scheduled send arrives later on the same socket")
    func scheduledSend() async throws {
        try await WebSocketFixture.with { fixture in
            let socket = try await fixture.open()
            try await socket.send(.text("later"))
            #expect(try await socket.receive(timeout: .seconds(5)) == .text("tick"))
        }
    }

    @Test("a peer used from another thread sends and closes through the loop")
    func peerOffLoop() async throws {
        try await WebSocketFixture.with { fixture in
            let socket = try await fixture.open()
            let peer = try #require(fixture.service.lastPeer.withLock { $0 })
            peer.send(.text("pushed 1"))
            peer.send(.text("pushed 2"))
            peer.close(code: 4000, reason: "enough")
            peer.send(.text("dropped: the closing handshake has begun"))
            #expect(try await socket.receive(timeout: .seconds(5)) == .text("pushed 1"))
            #expect(try await socket.receive(timeout: .seconds(5)) == .text("pushed 2"))
            await #expect(throws: WebSocketClosed(code: 4000, reason: "enough")) { try await socket.receive(timeout: .seconds(5)) }
            await fixture.service.events.waitFor("closed 4000")
        }
    }

    @Test("a message the service sends while accepting follows the 101")
    func greeting() async throws {
        try await WebSocketFixture.with { fixture in
            let socket = try await fixture.open("/greet")
            #expect(try await socket.receive(timeout: .seconds(5)) == .text("welcome"))
        }
    }

    @Test("a refused upgrade reports the server's status and body")
    func rejected() async throws {
        try await WebSocketFixture.with { fixture in
            do {
                _ = try await fixture.open("/forbidden")
                Issue.record("the upgrade should be refused")
            } catch let rejected as WebSocketUpgradeRejected {
                #expect(rejected.response.status == 403)
                #expect(rejected.response.body == Array("no entry".utf8))
                #expect(rejected.response.timing.total > .zero)
            }
            // The same server still answers plain HTTP.
            let plain = try await fixture.client.execute(HTTPRequest(method: "GET", target: "/x"), timeout: .seconds(5))
            #expect(plain.body == Array("plain /x".utf8))
        }
    }

    @Test("a server whose service takes no WebSockets answers an upgrade with 404")
    func notAWebSocketService() async throws {
        let group = try EventLoopGroup(loops: 1)
        defer { group.shutdown() }
        let server = try HTTPServer(group: group, port: 0, service: PlainService())
        defer { server.close() }
        let client = SocketTransport(group: group).makeClient(for: Endpoint(host: "127.0.0.1", port: server.port))
        await #expect(throws: WebSocketUpgradeRejected.self) {
            try await client.openWebSocket(HTTPRequest(method: "GET", target: "/ws"), protocols: [], timeout: .seconds(5))
        }
    }

    @Test("an unmasked frame from a client is refused with Close 1002")
    func unmaskedClientFrame() async throws {
        try await WebSocketFixture.with { fixture in
            let port = fixture.port
            let reply = try await offPool {
                let socket = try RawSocket.connect(port: port)
                defer { socket.close() }
                let key = WebSocketHandshake.makeKey()
                var request: [UInt8] = []
                WebSocketHandshake.makeRequest(target: "/echo", host: "127.0.0.1:\(port)", key: key).serialize(into: &request, host: "")
                socket.write(request)
                let (head, _) = socket.readHead()
                guard head.hasPrefix("HTTP/1.1 101") else { throw RawSocketError(description: "no 101: \(head)") }
                socket.write(WebSocketFrameEncoder.encode(.text("hi"), maskKey: nil))
                return socket.read() // until the server closes
            }
            var decoder = WebSocketFrameDecoder(role: .client)
            decoder.feed(reply)
            guard case .frame(let close) = try decoder.next() else {
                Issue.record("expected a Close frame, got \(reply)")
                return
            }
            #expect(close.opcode == .close)
            #expect(try WebSocketClosePayload(decoding: close.payload).code == .protocolError)
            await fixture.service.events.waitFor("closed 1002")
        }
    }

    @Test("a shared-connection transport opens each WebSocket on a connection of its own")
    func pooledTransport() async throws {
        try await WebSocketFixture.with { fixture in
            let pooled = SocketTransport(
                group: fixture.group,
                configuration: SocketTransportConfiguration(connections: ConnectionSettings(policy: .shared(poolSize: 1)))
            )
            .makeClient(for: Endpoint(host: "127.0.0.1", port: fixture.port))
            let first = try await pooled.openWebSocket(HTTPRequest(method: "GET", target: "/"), protocols: [], timeout: .seconds(5))
            let second = try await pooled.openWebSocket(HTTPRequest(method: "GET", target: "/"), protocols: [], timeout: .seconds(5))
            try await first.send(.text("one"))
            try await second.send(.text("two"))
            #expect(try await second.receive(timeout: .seconds(5)) == .text("two"))
            #expect(try await first.receive(timeout: .seconds(5)) == .text("one"))
            // The pool's one HTTP connection is still free for requests.
            #expect(try await pooled.execute(HTTPRequest(method: "GET", target: "/p"), timeout: .seconds(5)).status == 200)
        }
    }

    @Test("shutting down the client drops its open WebSockets (1006)")
    func shutdownDrops() async throws {
        try await WebSocketFixture.with { fixture in
            let socket = try await fixture.open()
            fixture.client.shutdown()
            await #expect(throws: WebSocketClosed(code: 1006, reason: "the connection dropped without a closing handshake")) {
                try await socket.receive(timeout: .seconds(5))
            }
            await fixture.service.events.waitFor("closed 1006")
        }
    }
}

private struct PlainService: HTTPService {
    func respond(to request: HTTPRequest) -> ServiceReply { ServiceReply(HTTPResponse(status: 200)) }
}

@Suite("Open client sockets, as the live metrics count them", .serialized, .timeLimit(.minutes(1)))
struct OpenSocketsTests {
    /// Waits, at most 5 s, for the loop to have done what a close asked.
    func settle(_ done: () -> Bool) async throws {
        for _ in 0..<100 where !done() { try await Task.sleep(for: .milliseconds(50)) }
    }

    @Test("a WebSocket counts from its handshake to its close, an HTTP connection from its connect to its close")
    func counts() async throws {
        try await WebSocketFixture.with { fixture in
            let sockets = OpenSockets.webSocketConnections
            let socket = try await fixture.open()
            #expect(OpenSockets.webSocketConnections == sockets + 1)
            await socket.close(code: 1000, reason: "", timeout: .seconds(2))
            try await settle { OpenSockets.webSocketConnections == sockets }
            #expect(OpenSockets.webSocketConnections == sockets)

            let connections = OpenSockets.httpConnections
            let client = SocketTransport(group: fixture.group).makeClient(for: Endpoint(host: "127.0.0.1", port: fixture.port))
            _ = try await client.execute(HTTPRequest(method: "GET", target: "/plain"), timeout: .seconds(5))
            #expect(OpenSockets.httpConnections == connections + 1, "kept alive after the response")
            client.shutdown()
            try await settle { OpenSockets.httpConnections == connections }
            #expect(OpenSockets.httpConnections == connections)
        }
    }
}
