import AuthloadCore
import Testing

@testable import AuthloadTransport

/// The handshake a run makes before its load (`SocketTransport.probeTLS`), and what it teaches the transport under
/// `target.http` "auto": a server that does not choose h2 by ALPN gets HTTP/1.1 clients from the first one on.
@Suite("TLS probe and the route it teaches", .timeLimit(.minutes(1)))
struct TLSProbeRouteTests {
    /// Answers every request with 200 and its target.
    final class Echo: HTTPService {
        func respond(to request: HTTPRequest) -> ServiceReply { ServiceReply(HTTPResponse(status: 200, body: Array(request.target.utf8))) }
    }

    /// A transport under `http` for a TLS server that offers h2 by ALPN or not, and the server's endpoint.
    func withServer(
        offersHTTP2: Bool, http: HTTPVersionChoice = .auto,
        _ body: (SocketTransport, Endpoint) async throws -> Void
    ) async throws {
        let identity = try TLSIdentity.selfSigned(hostnames: ["localhost"], ipAddresses: ["127.0.0.1"])
        let group = try EventLoopGroup(loops: 1)
        defer { group.shutdown() }
        let server = try HTTPServer(
            group: group, port: 0, service: Echo(), tls: TLSServerContext(identity: identity, offersHTTP2: offersHTTP2))
        defer { server.close() }
        var connections = ConnectionSettings()
        connections.http = http
        let transport = SocketTransport(
            group: group,
            configuration: SocketTransportConfiguration(
                connections: connections, tls: TLSClientConfiguration(trustedCertificatesPEM: [identity.certificatePEM])))
        try await body(transport, Endpoint(host: "127.0.0.1", port: server.port, tls: true))
    }

    @Test("under auto, a server that does not choose h2 gets HTTP/1.1 clients from the probe on; one that does keeps HTTP/2")
    func probeTeachesTheRoute() async throws {
        try await withServer(offersHTTP2: false) { transport, endpoint in
            #expect(transport.makeClient(for: endpoint) is HTTP2Client, "before the probe, auto over TLS tries h2")
            #expect(await transport.probeTLS(endpoint, timeout: .seconds(5)) == nil)
            let client = transport.makeClient(for: endpoint)
            defer { client.shutdown() }
            #expect(!(client is HTTP2Client))
            let response = try await client.execute(HTTPRequest(method: "GET", target: "/a"), timeout: .seconds(5))
            #expect(response.status == 200 && response.version == .http1)
        }
        try await withServer(offersHTTP2: true) { transport, endpoint in
            #expect(await transport.probeTLS(endpoint, timeout: .seconds(5)) == nil)
            let client = transport.makeClient(for: endpoint)
            defer { client.shutdown() }
            #expect(client is HTTP2Client)
            let response = try await client.execute(HTTPRequest(method: "GET", target: "/b"), timeout: .seconds(5))
            #expect(response.status == 200 && response.version == .http2)
        }
    }

    @Test("the probe offers what the run's connections will: with http 1.1 none is offered, and nothing is learned")
    func probeUnderHTTP1() async throws {
        try await withServer(offersHTTP2: true, http: .http1) { transport, endpoint in
            #expect(await transport.probeTLS(endpoint, timeout: .seconds(5)) == nil)
            let outcome = await TLSProbe.handshake(
                connectingTo: endpoint, configuration: TLSClientConfiguration(skipsCertificateVerification: true), timeout: .seconds(5))
            #expect(outcome.completed && outcome.negotiatedProtocol == nil, "no ALPN offered, none chosen")
            let offered = await TLSProbe.handshake(
                connectingTo: endpoint, configuration: TLSClientConfiguration(skipsCertificateVerification: true),
                offering: ["h2", "http/1.1"], timeout: .seconds(5))
            #expect(offered.completed && offered.negotiatedProtocol == "h2")
        }
    }

    @Test("a target that refuses the connection completes no handshake and teaches nothing")
    func refusedTarget() async throws {
        try await withServer(offersHTTP2: false) { transport, _ in
            let closed = Endpoint(host: "127.0.0.1", port: 1, tls: true)
            let outcome = await TLSProbe.handshake(
                connectingTo: closed, configuration: TLSClientConfiguration(), offering: ["h2", "http/1.1"], timeout: .seconds(2))
            #expect(!outcome.completed && outcome.failure == nil)
            #expect(await transport.probeTLS(closed, timeout: .seconds(2)) == nil)
            #expect(transport.makeClient(for: closed) is HTTP2Client, "still trying h2: nothing was learned")
        }
    }
}
