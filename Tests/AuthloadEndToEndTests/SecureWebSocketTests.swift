import AuthloadCore
import AuthloadTransport
import Foundation
import Testing

@Suite("wss:// over loopback", .timeLimit(.minutes(1)))
struct SecureWebSocketTests {
    /// Serves the echo service over TLS with a fresh self-signed certificate, and hands `body` a client for it.
    func withSecureServer(client tls: TLSClientConfiguration, _ body: (any HTTPClient, TLSIdentity) async throws -> Void) async throws {
        let identity = try TLSIdentity.selfSigned(hostnames: ["localhost"], ipAddresses: ["127.0.0.1"])
        let group = try EventLoopGroup(loops: 2)
        defer { group.shutdown() }
        let server = try HTTPServer(group: group, port: 0, service: EchoWebSocketService(), tls: TLSServerContext(identity: identity))
        defer { server.close() }
        let transport = SocketTransport(group: group, configuration: SocketTransportConfiguration(tls: tls))
        let client = transport.makeClient(for: Endpoint(host: "127.0.0.1", port: server.port, tls: true))
        defer { client.shutdown() }
        try await body(client, identity)
    }

    @Test("wss against a self-signed certificate fails with a certificate error by default")
    func verificationRefuses() async throws {
        try await withSecureServer(client: TLSClientConfiguration()) { client, _ in
            do {
                _ = try await client.openWebSocket(HTTPRequest(method: "GET", target: "/ws"), protocols: [], timeout: .seconds(5))
                Issue.record("the handshake should have failed")
            } catch let error as TransportError {
                #expect(error.kind == .tls)
                #expect(error.detail == "certificate verify failed: self-signed certificate")
                #expect(error.tlsFailure?.cause == .untrustedIssuer)
            }
        }
    }

    @Test("wss with insecureSkipTLSVerify opens, times the TLS handshake, and echoes masked messages")
    func insecureOpens() async throws {
        try await withSecureServer(client: TLSClientConfiguration(skipsCertificateVerification: true)) { client, _ in
            let socket = try await client.openWebSocket(
                HTTPRequest(method: "GET", target: "/ws"), protocols: ["v12.stomp"], timeout: .seconds(5))
            #expect(socket.subprotocol == "v12.stomp")
            #expect(socket.handshake.status == 101)
            #expect(socket.handshake.timing.tlsHandshake > .zero)
            let big = String(repeating: "x", count: 200_000)
            for message in [WebSocketMessage.text("hello over TLS"), .binary([0, 1, 2, 255]), .text(big)] {
                try await socket.send(message)
                #expect(try await socket.receive(timeout: .seconds(5)) == message)
            }
            await socket.close(code: 1000, reason: "done", timeout: .seconds(2))
        }
    }

    @Test("wss succeeds with verification on when the client trusts the server's certificate")
    func trustedOpens() async throws {
        let identity = try TLSIdentity.selfSigned(hostnames: ["localhost"], ipAddresses: ["127.0.0.1"])
        let group = try EventLoopGroup(loops: 1)
        defer { group.shutdown() }
        let server = try HTTPServer(group: group, port: 0, service: EchoWebSocketService(), tls: TLSServerContext(identity: identity))
        defer { server.close() }
        let transport = SocketTransport(
            group: group,
            configuration: SocketTransportConfiguration(
                tls: TLSClientConfiguration(trustedCertificatesPEM: [identity.certificatePEM])))
        let client = transport.makeClient(for: Endpoint(host: "127.0.0.1", port: server.port, tls: true))
        defer { client.shutdown() }
        let socket = try await client.openWebSocket(HTTPRequest(method: "GET", target: "/ws"), protocols: [], timeout: .seconds(5))
        try await socket.send(.text("trusted"))
        #expect(try await socket.receive(timeout: .seconds(5)) == .text("trusted"))
        await socket.close(code: 1000, reason: "", timeout: .seconds(2))
    }
}
