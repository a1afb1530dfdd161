import AuthloadCore
import AuthloadTransport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A blocking peer on 127.0.0.1 that answers one request and then reports how the client's close reached it.
private final class OneRequestPeer: @unchecked Sendable {
    let listener: Int32
    let port: Int

    init() throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, length) == 0 && getsockname(listener, $0, &length) == 0
            }
        }
        guard bound, listen(listener, 4) == 0 else { throw TransportError(.other, "peer: \(errno)") }
        self.listener = listener
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    /// Accepts one connection, answers its request, and returns what the next read gives once the client closes:
    /// 0 for a FIN, -ECONNRESET for a reset. Every blocking call gives up after 5 s.
    func serveOne() async -> Int {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread { [self] in
                defer { close(listener) }
                var limit = timeval(tv_sec: 5, tv_usec: 0)
                setsockopt(listener, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
                let fd = accept(listener, nil, nil)
                guard fd >= 0 else { return continuation.resume(returning: -Int(errno)) }
                defer { close(fd) }
                setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
                var buffer = [UInt8](repeating: 0, count: 4096)
                var request: [UInt8] = []
                while !request.ends(with: Array("\r\n\r\n".utf8)) {
                    let count = read(fd, &buffer, buffer.count)
                    guard count > 0 else { return continuation.resume(returning: -1000) }
                    request += buffer[..<count]
                }
                let response = Array("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok".utf8)
                _ = response.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
                let count = read(fd, &buffer, buffer.count)
                continuation.resume(returning: count < 0 ? -Int(errno) : count)
            }
        }
    }
}

extension Array where Element == UInt8 {
    fileprivate func ends(with suffix: [UInt8]) -> Bool { count >= suffix.count && Array(self[(count - suffix.count)...]) == suffix }
}

@Suite("Closing an idle client connection", .timeLimit(.minutes(1)))
struct ResetOnCloseTests {
    @Test("an idle connection the client is done with closes with a reset, leaving no TIME_WAIT on either side")
    func idleCloseResets() async throws {
        let peer = try OneRequestPeer()
        let served = Task { await peer.serveOne() }
        let group = try EventLoopGroup(loops: 1)
        defer { group.shutdown() }
        let client = SocketTransport(group: group).makeClient(for: Endpoint(host: "127.0.0.1", port: peer.port))
        let response = try await client.execute(HTTPRequest(method: "GET", target: "/"), timeout: .seconds(5))
        #expect(response.status == 200)
        client.shutdown()
        #expect(await served.value == -Int(ECONNRESET))
    }
}
