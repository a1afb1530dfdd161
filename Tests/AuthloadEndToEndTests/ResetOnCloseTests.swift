import AuthloadCore
import AuthloadTransport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

@Suite("Closing an idle client connection", .timeLimit(.minutes(1)))
struct ResetOnCloseTests {
    @Test("an idle connection the client is done with closes with a reset, leaving no TIME_WAIT on either side")
    func idleCloseResets() async throws {
        let listener = try RawListener()
        defer { listener.close() }
        // What the peer's next read gives once the client closes: 0 for a FIN, -ECONNRESET for a reset.
        let afterClose = Locked(Int.min)
        async let served: Void = listener.serveOne(
            { _ in Array("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok".utf8) },
            then: { socket in
                var byte: UInt8 = 0
                let count = recv(socket.fd, &byte, 1, 0)
                afterClose.withLock { $0 = count < 0 ? -Int(errno) : count }
                socket.close()
            })
        let group = try EventLoopGroup(loops: 1)
        defer { group.shutdown() }
        let client = SocketTransport(group: group).makeClient(for: Endpoint(host: "127.0.0.1", port: listener.port))
        let response = try await client.execute(HTTPRequest(method: "GET", target: "/"), timeout: .seconds(5))
        #expect(response.status == 200)
        client.shutdown()
        try await served
        #expect(afterClose.withLock { $0 } == -Int(ECONNRESET))
    }
}
