import AuthloadCore
import COpenSSL
import CSystem
import Glibc
import Testing

@testable import AuthloadTransport

/// A client and a server TLS stream talking over a non-blocking socket pair, driven step by step on the test's
/// thread: no network, no loop, no sleep.
@Suite("TLS streams over a socket pair")
struct TLSStreamTests {
    /// One connection: the client's end and the server's, over a socket pair closed when it goes.
    final class Pair {
        let client: TLSStream
        let server: TLSStream
        /// The client's socket, then the server's.
        let fds: [Int32]

        init(client context: TLSClientContext, server serverContext: TLSServerContext, host: String = "localhost", port: Int = 443)
            throws
        {
            var fds: [Int32] = [-1, -1]
            let status = socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0, &fds)
            try #require(status == 0)
            self.fds = fds
            client = try context.makeStream(fd: fds[0], host: host, port: port)
            server = try serverContext.makeStream(fd: fds[1])
        }

        deinit {
            for fd in fds { close(fd) }
        }

        /// Drives both handshakes in turn until both are done; each step moves what the other side wrote.
        func handshake() throws {
            var clientDone = false
            var serverDone = false
            for _ in 0..<50 where !(clientDone && serverDone) {
                if !clientDone { clientDone = try Self.step(client.handshake()) }
                if !serverDone { serverDone = try Self.step(server.handshake()) }
            }
            try #require(clientDone && serverDone, "the handshake did not finish in 50 steps")
        }

        private static func step(_ result: StreamResult) throws -> Bool {
            switch result {
            case .done: return true
            case .wouldBlock: return false
            case .end, .failed:
                Issue.record("handshake step: \(result)")
                throw TransportError(.tls, "handshake failed")
            }
        }

        /// Writes `text` from `from` as one TLS record.
        func write(_ text: String, from stream: TLSStream) throws {
            let bytes = Array(text.utf8)
            let result = bytes.withUnsafeBytes { stream.write($0) }
            try #require(result == .done(bytes.count))
        }

        /// What one pass of the read loop on `stream` hands its consumer, and why the loop stopped.
        func readOnce(_ stream: TLSStream) -> (chunks: [String], stop: ReadStop) {
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 16_384, alignment: 1)
            defer { buffer.deallocate() }
            var chunks: [String] = []
            let stop = stream.read(into: buffer) { chunk in
                chunks.append(String(decoding: chunk, as: UTF8.self))
                return true
            }
            return (chunks, stop)
        }

        /// A request and its answer, so the client has read what the server sent after the handshake (its tickets).
        func exchange() throws {
            try write("ping", from: client)
            #expect(readOnce(server).chunks == ["ping"])
            try write("pong", from: server)
            #expect(readOnce(client).chunks == ["pong"])
        }

        func shutdown() {
            client.shutdown()
            server.shutdown()
        }
    }

    let identity: TLSIdentity
    let serverContext: TLSServerContext
    let clientContext: TLSClientContext

    init() throws {
        identity = try TLSIdentity.selfSigned(hostnames: ["localhost"])
        serverContext = try TLSServerContext(identity: identity)
        clientContext = try TLSClientContext(
            configuration: TLSClientConfiguration(trustedCertificatesPEM: [identity.certificatePEM], trustsSystemRoots: false))
    }

    @Test("records that arrived together are all read in one pass of the read loop, which then reports the socket drained")
    func readDrainsRecords() throws {
        let pair = try Pair(client: clientContext, server: serverContext)
        try pair.handshake()
        for text in ["one", "two", "three"] { try pair.write(text, from: pair.server) }

        let (chunks, stop) = pair.readOnce(pair.client)
        #expect(chunks == ["one", "two", "three"])
        guard case .drained = stop else {
            Issue.record("the read loop stopped with \(stop)")
            return
        }
        #expect(!pair.client.hasBufferedInput)
    }

    @Test("a record that arrived in part is held until the rest arrives, then read whole")
    func partialRecord() throws {
        let pair = try Pair(client: clientContext, server: serverContext)
        try pair.handshake()
        try pair.exchange()
        let text = String(repeating: "x", count: 1000)
        try pair.write(text, from: pair.server)
        // Take the record off the client's socket, and send it again from the server's end in two pieces.
        var record = [UInt8](repeating: 0, count: 4096)
        let count = recv(pair.fds[0], &record, record.count, 0)
        try #require(count > text.count)
        let half = count / 2
        try #require(write(pair.fds[1], record, half) == half)

        let first = pair.readOnce(pair.client)
        #expect(first.chunks.isEmpty)
        guard case .drained = first.stop else {
            Issue.record("the read loop stopped with \(first.stop)")
            return
        }
        try #require(record[half..<count].withUnsafeBytes { write(pair.fds[1], $0.baseAddress, count - half) } == count - half)
        #expect(pair.readOnce(pair.client).chunks == [text])
    }

    @Test("a client's next connection to the same name and port resumes the session the server gave its last one")
    func resumesSession() throws {
        let key = TLSSessionCache.key(name: "localhost", port: 443)
        let first = try Pair(client: clientContext, server: serverContext)
        try first.handshake()
        #expect(!first.client.isResumed)
        try first.exchange()
        first.shutdown()
        #expect(clientContext.sessions.count(for: key) == 1)

        let second = try Pair(client: clientContext, server: serverContext)
        // Taken for this connection: no other may use the same ticket.
        #expect(clientContext.sessions.count(for: key) == 0)
        try second.handshake()
        #expect(second.client.isResumed)
        try second.exchange()
        second.shutdown()
        #expect(clientContext.sessions.count(for: key) == 1)

        let otherPort = try Pair(client: clientContext, server: serverContext, port: 8443)
        try otherPort.handshake()
        #expect(!otherPort.client.isResumed)
        #expect(clientContext.sessions.count(for: key) == 1)
    }

    @Test("with resumeSessions off no session is kept or taken: the next connection makes a full handshake")
    func resumptionOff() throws {
        let key = TLSSessionCache.key(name: "localhost", port: 443)
        let context = try TLSClientContext(
            configuration: TLSClientConfiguration(
                trustedCertificatesPEM: [identity.certificatePEM], trustsSystemRoots: false, resumeSessions: false))
        let first = try Pair(client: context, server: serverContext)
        try first.handshake()
        try first.exchange()
        first.shutdown()
        #expect(context.sessions.count(for: key) == 0)

        // A session in the cache (from a context that resumes) is not taken either.
        let resuming = try Pair(client: clientContext, server: serverContext)
        try resuming.handshake()
        try resuming.exchange()
        resuming.shutdown()
        let session = try #require(clientContext.sessions.take(for: key))
        context.sessions.keep(session, for: key)
        #expect(context.sessions.count(for: key) == 1)

        let second = try Pair(client: context, server: serverContext)
        #expect(context.sessions.count(for: key) == 1)
        try second.handshake()
        #expect(!second.client.isResumed)
        try second.exchange()
        second.shutdown()
        #expect(context.sessions.count(for: key) == 1)
    }

    @Test("a connection closed before it read the server's ticket leaves nothing to resume")
    func noTicketNoSession() throws {
        let pair = try Pair(client: clientContext, server: serverContext)
        try pair.handshake()
        pair.shutdown()
        #expect(clientContext.sessions.count(for: TLSSessionCache.key(name: "localhost", port: 443)) == 0)
    }

    @Test("connections open at once each keep their own session; the cache keeps no more than its capacity")
    func sessionsPerConnection() throws {
        let key = TLSSessionCache.key(name: "localhost", port: 443)
        let pairs = try (0..<2).map { _ in try Pair(client: clientContext, server: serverContext) }
        for pair in pairs {
            try pair.handshake()
            try pair.exchange()
        }
        for pair in pairs { pair.shutdown() }
        #expect(clientContext.sessions.count(for: key) == 2)

        let small = TLSSessionCache(capacity: 1)
        while let session = clientContext.sessions.take(for: key) { small.keep(session, for: key) }
        #expect(small.count(for: key) == 1)
    }

    @Test("the cache keeps no session that cannot be resumed")
    func keepsResumableOnly() throws {
        let cache = TLSSessionCache()
        cache.keep(try #require(SSL_SESSION_new()), for: "localhost:443")
        #expect(cache.count(for: "localhost:443") == 0)
        #expect(cache.take(for: "localhost:443") == nil)
    }
}
