import AuthloadCore
import AuthloadFlows
import AuthloadStaging
import AuthloadTransport
import Foundation
import Testing

/// A service that answers every request from a closure.
private struct ClosureService: HTTPService {
    let reply: @Sendable (HTTPRequest) -> ServiceReply
    func respond(to request: HTTPRequest) -> ServiceReply { reply(request) }
}

/// The numeric address `localhost` resolves to first here, as the transport's resolver picks it.
private func localhostAddress() throws -> String {
    var hints = addrinfo()
    hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
    var list: UnsafeMutablePointer<addrinfo>?
    guard getaddrinfo("localhost", "80", &hints, &list) == 0, let first = list else { throw TransportError(.nameResolution, "localhost") }
    defer { freeaddrinfo(list) }
    var text = [CChar](repeating: 0, count: Int(NI_MAXHOST))
    guard getnameinfo(first.pointee.ai_addr, first.pointee.ai_addrlen, &text, socklen_t(text.count), nil, 0, NI_NUMERICHOST) == 0 else {
        throw TransportError(.nameResolution, "localhost has no numeric form")
    }
    return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

@Suite("TLS over loopback", .timeLimit(.minutes(1)))
struct TLSTransportTests {
    static let login = HTTPRequest(
        method: "POST", target: "/csdk-sample/SDK/login",
        headers: ["Content-Type": "application/json"],
        body: Array(#"{"username": "user0", "password": "demo-password"}"#.utf8))

    /// Serves HTTPS with `identity` on `listen`, and hands `body` a client for `https://connectHost:port`.
    func withServer(
        identity: TLSIdentity, listen: String = "127.0.0.1", connectHost: String? = nil,
        client tls: TLSClientConfiguration, service: any HTTPService = StagingServer(configuration: StagingConfiguration()),
        _ body: (any HTTPClient) async throws -> Void
    ) async throws {
        let group = try EventLoopGroup(loops: 2)
        defer { group.shutdown() }
        let server = try HTTPServer(group: group, host: listen, port: 0, service: service, tls: TLSServerContext(identity: identity))
        defer { server.close() }
        let transport = SocketTransport(group: group, configuration: SocketTransportConfiguration(tls: tls))
        let client = transport.makeClient(for: Endpoint(host: connectHost ?? listen, port: server.port, tls: true))
        defer { client.shutdown() }
        try await body(client)
    }

    func trusting(_ identity: TLSIdentity) -> TLSClientConfiguration {
        TLSClientConfiguration(trustedCertificatesPEM: [identity.certificatePEM])
    }

    func tlsError(_ operation: () async throws -> HTTPResponse) async -> TransportError? {
        do {
            _ = try await operation()
            return nil
        } catch let error as TransportError {
            return error
        } catch {
            Issue.record("expected a TransportError, got \(error)")
            return nil
        }
    }

    @Test("an HTTPS login to the staging server succeeds when the client trusts its certificate, with the handshake timed")
    func trustedLogin() async throws {
        let identity = try TLSIdentity.selfSigned(hostnames: ["localhost"], ipAddresses: ["127.0.0.1"])
        try await withServer(identity: identity, client: trusting(identity)) { client in
            let response = try await client.execute(Self.login, timeout: .seconds(5))
            #expect(response.status == 200)
            let json = try JSONValue.parse(String(decoding: response.body, as: UTF8.self))
            let session = try #require(json["sessionid"]?.stringValue)
            #expect(!response.timing.reusedConnection)
            #expect(response.timing.tlsHandshake > .zero)
            #expect(response.timing.timeToFirstByte >= response.timing.connect + response.timing.tlsHandshake)

            let logout = try await client.execute(
                HTTPRequest(method: "DELETE", target: "/csdk-sample/SDK/login/id/\(session)"), timeout: .seconds(5))
            #expect((200..<300).contains(logout.status))
            #expect(logout.timing.reusedConnection, "keep-alive carries over TLS")
            #expect(logout.timing.tlsHandshake == .zero)
            #expect(logout.timing.connect == .zero)
        }
    }

    @Test("the FCSDK flow runs over HTTPS through the runner without errors")
    func flowOverTLS() async throws {
        let identity = try TLSIdentity.selfSigned(hostnames: ["localhost"], ipAddresses: ["127.0.0.1"])
        let group = try EventLoopGroup(loops: 2)
        defer { group.shutdown() }
        let server = try HTTPServer(
            group: group, port: 0, service: StagingServer(configuration: StagingConfiguration()),
            tls: TLSServerContext(identity: identity))
        defer { server.close() }
        let endpoint = Endpoint(host: "127.0.0.1", port: server.port, tls: true)
        let plan = RunPlan(
            name: "tls", target: .url(TargetURL(endpoint: endpoint)),
            load: LoadPlan(users: 4, duration: .milliseconds(600), thinkTime: .fixed(.milliseconds(20)), gracefulStop: .seconds(5)),
            flows: [FlowPlan(name: "login", kind: "fcsdk-login", options: ProfileReader(path: "flows[0]", value: .null))],
            users: UserFeeder())
        let transport = SocketTransport(group: group, configuration: SocketTransportConfiguration(tls: trusting(identity)))
        let outcome = await Runner(
            plan: plan, flows: [FCSDKLoginFlow(options: .init())], transport: transport,
            endpoint: endpoint, clock: ContinuousClock()
        ).run()
        let login = try #require(outcome.measured.metrics.first { $0.id == MetricID(flow: "login", step: "login") })
        #expect(login.count >= 4)
        #expect(login.errors == 0, "\(outcome.measured.errors)")
    }

    @Test(
        "default verification rejects a self-signed certificate as an untrusted issuer, naming no profile key; skipping verification accepts it"
    )
    func selfSignedRejected() async throws {
        let identity = try TLSIdentity.selfSigned(hostnames: ["localhost"], ipAddresses: ["127.0.0.1"])
        try await withServer(identity: identity, client: TLSClientConfiguration()) { client in
            let error = try #require(await tlsError { try await client.execute(Self.login, timeout: .seconds(5)) })
            #expect(error.kind == .tls)
            #expect(error.tlsFailure == TLSFailure(.untrustedIssuer, reason: "self-signed certificate", peer: "127.0.0.1"))
            #expect(error.detail == "certificate verify failed: self-signed certificate")
        }
        try await withServer(identity: identity, client: TLSClientConfiguration(skipsCertificateVerification: true)) { client in
            let response = try await client.execute(Self.login, timeout: .seconds(5))
            #expect(response.status == 200)
            #expect(response.timing.tlsHandshake > .zero)
        }
    }

    @Test("a trusted certificate that does not name the address connected to is rejected")
    func addressMismatch() async throws {
        let identity = try TLSIdentity.selfSigned(hostnames: ["localhost"])
        try await withServer(identity: identity, client: trusting(identity)) { client in
            let error = try #require(await tlsError { try await client.execute(Self.login, timeout: .seconds(5)) })
            #expect(error.kind == .tls)
            #expect(error.detail == "certificate verify failed: IP address mismatch: the certificate is not for 127.0.0.1", "\(error)")
            #expect(error.tlsFailure?.cause == .nameMismatch)
        }
    }

    @Test("a host name is checked against the certificate's names", arguments: [true, false])
    func hostNameCheck(matching: Bool) async throws {
        let address = try localhostAddress()
        let identity = try TLSIdentity.selfSigned(hostnames: [matching ? "localhost" : "auth.example.test"])
        try await withServer(identity: identity, listen: address, connectHost: "localhost", client: trusting(identity)) { client in
            if matching {
                #expect(try await client.execute(Self.login, timeout: .seconds(5)).status == 200)
            } else {
                let error = try #require(await tlsError { try await client.execute(Self.login, timeout: .seconds(5)) })
                #expect(
                    error.detail.hasPrefix("certificate verify failed: hostname mismatch: the certificate is not for localhost"), "\(error)"
                )
            }
        }
    }

    @Test("a 1 MB request and a 1 MB response cross TLS intact")
    func bigBodies() async throws {
        let identity = try TLSIdentity.selfSigned(hostnames: ["localhost"], ipAddresses: ["127.0.0.1"])
        let upload = (0..<1_048_576).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 11) }
        let echo = ClosureService { request in ServiceReply(HTTPResponse(status: 200, body: request.body.reversed())) }
        try await withServer(identity: identity, client: trusting(identity), service: echo) { client in
            for _ in 0..<2 {
                let response = try await client.execute(HTTPRequest(method: "POST", target: "/echo", body: upload), timeout: .seconds(20))
                #expect(response.status == 200)
                #expect(response.body.count == upload.count)
                #expect(response.body == upload.reversed())
            }
        }
    }

    @Test("a plain HTTP client talking to a TLS server fails at once instead of hanging")
    func plainClientToTLSServer() async throws {
        let identity = try TLSIdentity.selfSigned(hostnames: ["localhost"], ipAddresses: ["127.0.0.1"])
        let group = try EventLoopGroup(loops: 1)
        defer { group.shutdown() }
        let server = try HTTPServer(
            group: group, port: 0, service: StagingServer(configuration: StagingConfiguration()),
            tls: TLSServerContext(identity: identity))
        defer { server.close() }
        let client = SocketTransport(group: group).makeClient(for: Endpoint(host: "127.0.0.1", port: server.port))
        defer { client.shutdown() }
        let error = try #require(await tlsError { try await client.execute(Self.login, timeout: .seconds(3)) })
        #expect([.closed, .connectionReset].contains(error.kind), "\(error)")
    }

    @Test("a server that accepts TCP but never answers the TLS handshake hits the connect timeout")
    func silentServer() async throws {
        // A listening socket nobody accepts on: the kernel completes TCP connects, and nothing ever replies.
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        try #require(fd >= 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && listen(fd, 8) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        try #require(bound)
        let group = try EventLoopGroup(loops: 1)
        defer { group.shutdown() }
        let transport = SocketTransport(
            group: group, configuration: SocketTransportConfiguration(connections: ConnectionSettings(connectTimeout: .milliseconds(200))))
        let client = transport.makeClient(for: Endpoint(host: "127.0.0.1", port: Int(UInt16(bigEndian: address.sin_port)), tls: true))
        defer { client.shutdown() }
        let started = ContinuousClock.now
        let error = try #require(await tlsError { try await client.execute(Self.login, timeout: .seconds(10)) })
        #expect(error == TransportError(.timedOut(.tlsHandshake), "TLS handshake"))
        #expect(error.kind == .connectTimeout && error.isConnectionFailure)
        #expect(ContinuousClock.now - started < .seconds(5), "the connect timeout, not the request timeout, ended it")
    }

    @Test("a TLS client talking to a plain HTTP server fails with a TLS error")
    func tlsClientToPlainServer() async throws {
        let group = try EventLoopGroup(loops: 1)
        defer { group.shutdown() }
        let server = try HTTPServer(group: group, port: 0, service: StagingServer(configuration: StagingConfiguration()))
        defer { server.close() }
        let transport = SocketTransport(
            group: group, configuration: SocketTransportConfiguration(tls: TLSClientConfiguration(skipsCertificateVerification: true)))
        let client = transport.makeClient(for: Endpoint(host: "127.0.0.1", port: server.port, tls: true))
        defer { client.shutdown() }
        let error = try #require(await tlsError { try await client.execute(Self.login, timeout: .seconds(3)) })
        #expect(error.kind == .tls, "\(error)")
        #expect(error.detail.hasPrefix("TLS handshake failed: "), "\(error)")
    }
}

@Suite("TLS identities and contexts")
struct TLSIdentityTests {
    @Test("a self-signed identity has PEM parts and a SHA-256 fingerprint of 32 colon-separated bytes")
    func selfSigned() throws {
        let identity = try TLSIdentity.selfSigned(hostnames: ["localhost"], ipAddresses: ["127.0.0.1", "::1"])
        #expect(identity.certificatePEM.hasPrefix("-----BEGIN CERTIFICATE-----\n"))
        #expect(identity.privateKeyPEM.hasPrefix("-----BEGIN PRIVATE KEY-----\n"))
        let fingerprint = try identity.sha256Fingerprint()
        #expect(fingerprint.count == 32 * 3 - 1)
        #expect(fingerprint.split(separator: ":").allSatisfy { $0.count == 2 && $0.allSatisfy(\.isHexDigit) })
        let other = try TLSIdentity.selfSigned(hostnames: ["localhost"], ipAddresses: ["127.0.0.1", "::1"])
        #expect(try other.sha256Fingerprint() != fingerprint, "every identity has its own key and serial")
    }

    @Test(
        "names that cannot go into a certificate are refused with the reason",
        arguments: [
            ([], [], "a certificate needs at least one host name or IP address"),
            (["localhost"], ["localhost"], "\"localhost\" is not a numeric IP address for a certificate"),
            (["a,b"], [], "\"a,b\" is not a host name for a certificate")
        ])
    func badNames(hostnames: [String], addresses: [String], message: String) {
        #expect(throws: TransportError(.tls, message)) { try TLSIdentity.selfSigned(hostnames: hostnames, ipAddresses: addresses) }
    }

    @Test("the same trusted certificate given twice is no error: OpenSSL's reason code says it is a repeat")
    func repeatedTrustedCertificate() throws {
        let identity = try TLSIdentity.selfSigned(hostnames: ["localhost"])
        _ = try TLSClientContext(
            configuration: TLSClientConfiguration(trustedCertificatesPEM: [identity.certificatePEM, identity.certificatePEM]))
    }

    @Test("an extra trusted certificate that is not PEM is a clear error, and a mismatched key too")
    func badPEM() throws {
        #expect(throws: TransportError(.tls, "trusted certificate 1 holds no PEM certificate (-----BEGIN CERTIFICATE-----)")) {
            try TLSClientContext(configuration: TLSClientConfiguration(trustedCertificatesPEM: ["not a certificate"]))
        }
        let one = try TLSIdentity.selfSigned(hostnames: ["localhost"])
        let two = try TLSIdentity.selfSigned(hostnames: ["localhost"])
        do {
            _ = try TLSServerContext(identity: TLSIdentity(certificatePEM: one.certificatePEM, privateKeyPEM: two.privateKeyPEM))
            Issue.record("a key that does not fit the certificate was accepted")
        } catch {
            #expect(error.kind == .tls)
            #expect(error.detail.hasPrefix("the private key does not fit the server certificate"), "\(error)")
        }
    }
}
