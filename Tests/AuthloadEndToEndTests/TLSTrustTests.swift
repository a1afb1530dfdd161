import AuthloadCLI
import AuthloadCore
import AuthloadStaging
import AuthloadTransport
import Foundation
import Testing

/// A staging stack's private PKI, made by the test: a CA, the certificates it issues, and a CA nobody trusts.
struct PrivatePKI {
    let authority: TLSIdentity
    /// Another CA, for a wrong `caFile` and a client certificate the server does not know.
    let stranger: TLSIdentity
    /// For localhost and 127.0.0.1, as a staging server reached on this machine.
    let server: TLSIdentity
    /// For `staging.example.test` only: reached by address, it verifies only with a server name.
    let named: TLSIdentity
    /// Expired yesterday.
    let expired: TLSIdentity
    let client: TLSIdentity
    let strangerClient: TLSIdentity

    init() throws {
        authority = try TLSIdentity.authority(commonName: "authload test CA")
        stranger = try TLSIdentity.authority(commonName: "someone else's CA")
        server = try authority.issue(commonName: "localhost", hostnames: ["localhost"], ipAddresses: ["127.0.0.1"])
        named = try authority.issue(commonName: "staging.example.test", hostnames: ["staging.example.test"])
        expired = try authority.issue(
            commonName: "localhost", hostnames: ["localhost"], ipAddresses: ["127.0.0.1"], notBefore: .seconds(-2 * 86_400),
            notAfter: .seconds(-86_400))
        client = try authority.issue(commonName: "load generator", purpose: .client)
        strangerClient = try stranger.issue(commonName: "load generator", purpose: .client)
    }
}

/// An HTTPS staging server on 127.0.0.1 presenting `identity`, asking clients for a certificate when
/// `clientAuthorities` is set; `body` gets its port.
func withStagingServer(
    _ identity: TLSIdentity, clientAuthorities: TLSIdentity? = nil, _ body: (Int) async throws -> Void
) async throws {
    let group = try EventLoopGroup(loops: 1)
    defer { group.shutdown() }
    let server = try HTTPServer(
        group: group, port: 0, service: StagingServer(configuration: StagingConfiguration()),
        tls: TLSServerContext(identity: identity, clientAuthoritiesPEM: clientAuthorities?.certificatePEM))
    defer { server.close() }
    try await body(server.port)
}

@Suite("TLS trust in a private CA, over loopback", .timeLimit(.minutes(1)))
struct TLSTrustTests {
    static let health = HTTPRequest(method: "GET", target: "/health")

    /// What one request to the server at `port` with `tls` gives: the status, or the transport error.
    func request(port: Int, host: String = "127.0.0.1", _ tls: TLSClientConfiguration) async throws -> Result<Int, TransportError> {
        let group = try EventLoopGroup(loops: 1)
        defer { group.shutdown() }
        let client = SocketTransport(group: group, configuration: SocketTransportConfiguration(tls: tls))
            .makeClient(for: Endpoint(host: host, port: port, tls: true))
        defer { client.shutdown() }
        do {
            return .success(try await client.execute(Self.health, timeout: .seconds(5)).status)
        } catch let error as TransportError {
            return .failure(error)
        }
    }

    func trusting(_ authority: TLSIdentity, client: TLSIdentity? = nil) -> TLSClientConfiguration {
        TLSClientConfiguration(
            trustedCertificatesPEM: [authority.certificatePEM], trustsSystemRoots: false,
            clientCertificatePEM: client?.certificatePEM, clientKeyPEM: client?.privateKeyPEM)
    }

    @Test("a server certificate the trusted CA issued verifies, with the system's CAs left out or added")
    func trustedAuthority() async throws {
        let pki = try PrivatePKI()
        try await withStagingServer(pki.server) { port in
            let status1 = try await request(port: port, trusting(pki.authority))
            #expect(status1 == .success(200))
            var withSystem = trusting(pki.authority)
            withSystem.trustsSystemRoots = true
            let status2 = try await request(port: port, withSystem)
            #expect(status2 == .success(200))
        }
    }

    @Test("a server that sends its intermediate CA verifies against the root alone, and against the intermediate alone")
    func intermediate() async throws {
        let root = try TLSIdentity.authority(commonName: "staging root")
        let issuing = try root.issue(commonName: "staging issuing CA", purpose: .authority)
        let leaf = try issuing.issue(commonName: "localhost", hostnames: ["localhost"], ipAddresses: ["127.0.0.1"])
        let chained = TLSIdentity(certificatePEM: leaf.certificatePEM + issuing.certificatePEM, privateKeyPEM: leaf.privateKeyPEM)
        try await withStagingServer(chained) { port in
            let byRoot = try await request(port: port, trusting(root))
            #expect(byRoot == .success(200))
            let byIssuing = try await request(port: port, trusting(issuing))
            #expect(byIssuing == .success(200))
        }
        try await withStagingServer(leaf) { port in
            let error = try #require(
                try await request(port: port, trusting(root)).failure, "without the intermediate, the root alone cannot")
            #expect(error.tlsFailure?.cause == .untrustedIssuer)
        }
    }

    @Test("a certificate from another CA fails as an untrusted issuer, with OpenSSL's reason")
    func wrongAuthority() async throws {
        let pki = try PrivatePKI()
        try await withStagingServer(pki.server) { port in
            let error = try #require(try await request(port: port, trusting(pki.stranger)).failure)
            #expect(error.kind == .tls)
            #expect(error.tlsFailure == TLSFailure(.untrustedIssuer, reason: "unable to get local issuer certificate", peer: "127.0.0.1"))
            #expect(error.detail == "certificate verify failed: unable to get local issuer certificate")
        }
    }

    @Test("an expired certificate fails as expired")
    func expired() async throws {
        let pki = try PrivatePKI()
        try await withStagingServer(pki.expired) { port in
            let error = try #require(try await request(port: port, trusting(pki.authority)).failure)
            #expect(error.tlsFailure == TLSFailure(.expired, reason: "certificate has expired", peer: "127.0.0.1"))
        }
    }

    @Test("reached by address, a certificate for a name fails as a name mismatch, and verifies with that server name")
    func serverName() async throws {
        let pki = try PrivatePKI()
        try await withStagingServer(pki.named) { port in
            let error = try #require(try await request(port: port, trusting(pki.authority)).failure)
            #expect(error.tlsFailure?.cause == .nameMismatch)
            #expect(error.detail == "certificate verify failed: IP address mismatch: the certificate is not for 127.0.0.1")

            var named = trusting(pki.authority)
            named.serverNames = ["127.0.0.1": "staging.example.test"]
            let status3 = try await request(port: port, named)
            #expect(status3 == .success(200))
            named.serverNames = ["127.0.0.1": "other.example.test"]
            let other = try #require(try await request(port: port, named).failure)
            #expect(other.tlsFailure == TLSFailure(.nameMismatch, reason: "hostname mismatch", peer: "other.example.test"))
        }
    }

    @Test("a server that requires a client certificate accepts one its CA issued and refuses none or another, each by cause")
    func clientCertificates() async throws {
        let pki = try PrivatePKI()
        try await withStagingServer(pki.server, clientAuthorities: pki.authority) { port in
            let status4 = try await request(port: port, trusting(pki.authority, client: pki.client))
            #expect(status4 == .success(200))

            let missing = try #require(try await request(port: port, trusting(pki.authority)).failure)
            #expect(missing.kind == .tls)
            #expect(missing.tlsFailure?.cause == .clientCertificateRequired, "\(missing)")
            #expect(missing.detail.hasPrefix("the server requires a client certificate ("), "\(missing)")

            let refused = try #require(try await request(port: port, trusting(pki.authority, client: pki.strangerClient)).failure)
            #expect(refused.tlsFailure?.cause == .clientCertificateRefused, "\(refused)")
            #expect(refused.detail.hasPrefix("the server refused the client certificate ("), "\(refused)")
        }
    }

    @Test("the probe before a run finds each certificate problem by cause, passes a good one, and sends no request")
    func probe() async throws {
        let pki = try PrivatePKI()
        let group = try EventLoopGroup(loops: 1)
        defer { group.shutdown() }
        let staging = StagingServer(configuration: StagingConfiguration())
        let cases: [(TLSIdentity, TLSIdentity?, TLSClientConfiguration, TLSFailure.Cause?)] = [
            (pki.server, nil, trusting(pki.authority), nil),
            (pki.server, nil, trusting(pki.stranger), .untrustedIssuer),
            (pki.expired, nil, trusting(pki.authority), .expired),
            (pki.named, nil, trusting(pki.authority), .nameMismatch),
            (pki.server, pki.authority, trusting(pki.authority), .clientCertificateRequired),
            (pki.server, pki.authority, trusting(pki.authority, client: pki.strangerClient), .clientCertificateRefused),
            (pki.server, pki.authority, trusting(pki.authority, client: pki.client), nil)
        ]
        for (identity, clientAuthorities, configuration, expected) in cases {
            let server = try HTTPServer(
                group: group, port: 0, service: staging,
                tls: TLSServerContext(identity: identity, clientAuthoritiesPEM: clientAuthorities?.certificatePEM))
            defer { server.close() }
            let failure = await TLSProbe.failure(
                connectingTo: Endpoint(host: "127.0.0.1", port: server.port, tls: true), configuration: configuration, timeout: .seconds(5))
            #expect(failure?.cause == expected, "\(failure.map { "\($0)" } ?? "passed")")
        }
        #expect(staging.accessLog.total == 0, "the probe only shakes hands")
        #expect(
            await TLSProbe.failure(
                connectingTo: Endpoint(host: "127.0.0.1", port: 1, tls: true), configuration: TLSClientConfiguration(), timeout: .seconds(2)
            )
                == nil, "a refused connection is left for the run to report")
    }

    @Test("a client key that does not fit its certificate, or is not PEM, is named before any connection")
    func badClientKey() throws {
        let pki = try PrivatePKI()
        let mismatched = TLSClientConfiguration(clientCertificatePEM: pki.client.certificatePEM, clientKeyPEM: pki.server.privateKeyPEM)
        #expect(throws: TLSConfigurationError(.clientKey, "does not fit the client certificate")) { try TLSClientContext.check(mismatched) }
        let notPEM = TLSClientConfiguration(clientCertificatePEM: pki.client.certificatePEM, clientKeyPEM: "not a key")
        #expect(throws: TLSConfigurationError(.clientKey, "holds no PEM private key (-----BEGIN PRIVATE KEY-----)")) {
            try TLSClientContext.check(notPEM)
        }
        let damaged = TLSClientConfiguration(trustedCertificatesPEM: ["-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"])
        #expect(
            throws: TLSConfigurationError(
                .trustedCertificates(index: 0), "holds a PEM certificate OpenSSL cannot read (cut short or damaged?)")
        ) { try TLSClientContext.check(damaged) }
    }

    @Test("a configuration and an identity print without their private key")
    func noKeyInDescriptions() throws {
        let pki = try PrivatePKI()
        let configuration = trusting(pki.authority, client: pki.client)
        let body = pki.client.privateKeyPEM.split(separator: "\n")[1]
        for text in ["\(configuration)", "\(pki.client)", String(describing: configuration), String(describing: pki.client)] {
            #expect(!text.contains(body))
            #expect(!text.contains("PRIVATE KEY"))
        }
    }
}

extension Result {
    var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}

/// Runs `authload run` in this process against a staging server the test starts, with `target.tls` set from files.
@Suite("authload run against a staging stack with its own CA", .serialized, .timeLimit(.minutes(2)))
struct TLSTrustRunTests {
    /// Writes the PEM files into one directory and a profile naming them by relative path (found beside the profile).
    static func profile(
        port: Int, host: String = "127.0.0.1", tls: String, files: [String: String], insecure: Bool = false
    ) throws -> String {
        let directory = try scratchDirectory("tls-trust")
        for (name, text) in files { try text.write(toFile: "\(directory)/\(name)", atomically: true, encoding: .utf8) }
        let path = "\(directory)/staging.json"
        try """
        {"name": "staging-tls", "target": {"baseURL": "https://\(host):\(port)", "tls": \(tls)\(insecure ? ", \"insecureSkipTLSVerify\": true" : "")},
         "load": {"users": 2, "duration": "1s", "thinkTime": "50ms", "gracefulStop": "2s"},
         "users": {"username": "user{n}", "password": "demo-password"},
         "flows": [{"name": "login", "kind": "fcsdk-login"}]}
        """.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    static func run(_ profile: String) async -> (ExitCode, Captured) {
        let captured = Captured()
        let out = (profile as NSString).deletingLastPathComponent + "/report"
        let code = await Authload.main(["run", profile, "--out", out, "--quiet"], console: captured.console)
        return (code, captured)
    }

    @Test("with caFile naming the CA that issued the server's certificate, the run verifies and succeeds")
    func trustedRun() async throws {
        let pki = try PrivatePKI()
        try await withStagingServer(pki.server) { port in
            let path = try Self.profile(port: port, tls: #"{"caFile": "ca.pem"}"#, files: ["ca.pem": pki.authority.certificatePEM])
            let (code, captured) = await Self.run(path)
            #expect(code == .success, "\(captured.err)")
            #expect(!captured.err.contains("warning:"), "verification stays on")
        }
    }

    @Test(
        "each certificate problem fails the run at its first connection, before any load, with one line naming the cause and the key to set",
        arguments: [
            ("wrong CA", "certificate verify failed: unable to get local issuer certificate", "target.tls.caFile"),
            ("expired", "certificate verify failed: certificate has expired", "target.insecureSkipTLSVerify"),
            ("wrong name", "certificate verify failed: IP address mismatch: the certificate is not for 127.0.0.1", "target.tls.serverName"),
            ("no client certificate", "the server requires a client certificate (", "target.tls.clientCertificate and target.tls.clientKey")
        ])
    func failures(problem: String, cause: String, key: String) async throws {
        let pki = try PrivatePKI()
        let (identity, ca): (TLSIdentity, TLSIdentity) =
            switch problem {
            case "wrong CA": (pki.server, pki.stranger)
            case "expired": (pki.expired, pki.authority)
            case "wrong name": (pki.named, pki.authority)
            default: (pki.server, pki.authority)
            }
        try await withStagingServer(identity, clientAuthorities: problem == "no client certificate" ? pki.authority : nil) { port in
            let path = try Self.profile(port: port, tls: #"{"caFile": "ca.pem"}"#, files: ["ca.pem": ca.certificatePEM])
            let (code, captured) = await Self.run(path)
            #expect(code == .runError)
            let lines = captured.err.split(separator: "\n")
            #expect(lines.count == 1, "\(captured.err)")
            let line = String(lines.first ?? "")
            #expect(line.hasPrefix("error: TLS to https://127.0.0.1:\(port) failed: \(cause)"), "\(line)")
            #expect(line.contains("set \(key)") || line.contains("; \(key)"), "\(line)")
            #expect(!line.contains("socket error"))
            let report = (path as NSString).deletingLastPathComponent + "/report"
            #expect(!FileManager.default.fileExists(atPath: report), "no load ran, so there is no report")
        }
    }

    @Test("serverName makes a certificate for a name verify on a baseURL that is an address")
    func serverName() async throws {
        let pki = try PrivatePKI()
        try await withStagingServer(pki.named) { port in
            let path = try Self.profile(
                port: port, tls: #"{"caFile": "ca.pem", "serverName": "staging.example.test"}"#,
                files: ["ca.pem": pki.authority.certificatePEM])
            let (code, captured) = await Self.run(path)
            #expect(code == .success, "\(captured.err)")
        }
    }

    @Test("a client certificate and key from files pass a server that requires one")
    func mutualTLS() async throws {
        let pki = try PrivatePKI()
        try await withStagingServer(pki.server, clientAuthorities: pki.authority) { port in
            let path = try Self.profile(
                port: port, tls: #"{"caFile": "ca.pem", "clientCertificate": "client.pem", "clientKey": "client-key.pem"}"#,
                files: [
                    "ca.pem": pki.authority.certificatePEM, "client.pem": pki.client.certificatePEM,
                    "client-key.pem": pki.client.privateKeyPEM
                ])
            let (code, captured) = await Self.run(path)
            #expect(code == .success, "\(captured.err)")
        }
    }

    @Test("a demo-like profile with caFile set to what serve --tls --cert-out wrote runs with verification on and exits 0")
    func againstServe() async throws {
        let directory = try scratchDirectory("serve-tls")
        let certificate = "\(directory)/staging.pem"
        let serve = try RunningAuthload(["serve", "--tls", "--port", "0", "--cert-out", certificate])
        defer { if serve.process.isRunning { serve.process.interrupt() } }
        await serve.waitFor("certificate written to")
        let listening = try #require(
            serve.stdout.firstMatch(of: /listening on https:\/\/127\.0\.0\.1:(\d+)/), "\(serve.stdout)\(serve.stderr)")
        let port = try #require(Int(listening.1))
        #expect(serve.stdout.contains("accepting h2, http/1.1 (ALPN)\n"), "serve says what it speaks: \(serve.stdout)")
        let profile = "\(directory)/serve-tls.json"
        try """
        {"name": "serve-tls", "target": {"baseURL": "https://127.0.0.1:\(port)", "tls": {"caFile": "staging.pem"}},
         "load": {"users": 4, "rampUp": "500ms", "duration": "2s", "thinkTime": {"min": "100ms", "max": "300ms"}},
         "flows": [{"name": "login", "kind": "fcsdk-login", "hold": "50ms"}]}
        """.write(toFile: profile, atomically: true, encoding: .utf8)
        let (code, captured) = await Self.run(profile)
        #expect(code == .success, "\(captured.err)")
        #expect(!captured.err.contains("warning:"))
        let summary = try String(contentsOfFile: "\(directory)/report/summary.csv", encoding: .utf8)
        #expect(summary.contains("login,logout,"))
        serve.process.interrupt()
        #expect(await serve.waitForExit() == 0)
    }

    @Test(
        "an unreadable or malformed TLS file is a profile error, exit 64, naming the key and the file",
        arguments: [
            (#"{"caFile": "missing.pem"}"#, #"target.tls.caFile: cannot read "missing.pem""#),
            (#"{"caFile": "bad.pem"}"#, #"target.tls.caFile: "bad.pem" holds no PEM certificate"#),
            (
                #"{"caFile": "ca.pem", "clientCertificate": "client.pem", "clientKey": "bad.pem"}"#,
                #"target.tls.clientKey: "bad.pem" holds no PEM private key"#
            ),
            (
                #"{"caFile": "ca.pem", "clientCertificate": "bad.pem", "clientKey": "ca.pem"}"#,
                #"target.tls.clientCertificate: "bad.pem" holds no PEM certificate"#
            ),
            (#"{"clientCertificate": "client.pem"}"#, "target.tls: clientCertificate needs clientKey"),
            (#"{"caFile": "ca.pem"}"#, "target.insecureSkipTLSVerify: accepts any certificate, so target.tls.caFile would never be used")
        ])
    func badFiles(tls: String, message: String) async throws {
        let pki = try PrivatePKI()
        let path = try Self.profile(
            port: 8443, tls: tls,
            files: ["ca.pem": pki.authority.certificatePEM, "client.pem": pki.client.certificatePEM, "bad.pem": "not PEM\n"],
            insecure: message.hasPrefix("target.insecureSkipTLSVerify"))
        let captured = Captured()
        let code = await Authload.main(["validate", path], console: captured.console)
        #expect(code == .usage)
        #expect(captured.err.hasPrefix("error: staging.json: \(message)"), "\(captured.err)")
        #expect(captured.err.split(separator: "\n").count == 1)
    }
}
