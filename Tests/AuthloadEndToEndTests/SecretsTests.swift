import AuthloadCLI
import AuthloadTransport
import Foundation
import Testing

/// Secrets a run uses must not reach its output or any file it writes.
@Suite("No secret in what a run writes", .serialized, .timeLimit(.minutes(1)))
struct SecretsTests {
    static let password = "Pa55-zebra-quartz"
    static let wrongPassword = "Wr0ng-walrus-tango"
    static let invitationCode = "123454321"

    @Test("passwords, invitation codes and tokens appear in no report file and not in the output")
    func grepReport() async throws {
        let users = try temporaryFile(
            "users.csv",
            """
            username,password,invitationCode
            alice@example.com,\(Self.password),\(Self.invitationCode)
            bob@example.com,\(Self.wrongPassword),\(Self.invitationCode)
            """)
        let profile = try temporaryFile(
            "secrets.json",
            """
            {"name": "secrets",
             "target": {"embedded": {"fcsdk": {"password": "\(Self.password)", "setCookie": "JSESSIONID"},
                                     "gccs": {"nodeDelay": {"fixed": "5ms"}},
                                     "streem": {"password": "\(Self.password)", "tokenLifetime": "2s"}}},
             "load": {"users": 8, "duration": "2s", "thinkTime": "50ms", "gracefulStop": "5s"},
             "users": {"csv": "\(users)"},
             "flows": [{"name": "login", "kind": "fcsdk-login", "hold": "10ms"},
                       {"name": "gccs", "kind": "gccs-auth", "cancelRatio": 0.2},
                       {"name": "streem", "kind": "streem-session", "hold": "2500ms", "callInterval": "500ms", "refreshLead": "500ms"},
                       {"name": "openid", "kind": "streem-session", "login": "openid", "hold": "2500ms", "callInterval": "500ms", "refresh": "reactive"}]}
            """)
        let out = (profile as NSString).deletingLastPathComponent + "/report"
        let captured = Captured()
        _ = await Authload.main(["run", profile, "--out", out], console: captured.console)

        let files = try FileManager.default.contentsOfDirectory(atPath: out)
        #expect(files.contains("result.json") && files.contains("errors.csv") && files.contains("report.html"))
        let errors = try String(contentsOfFile: out + "/errors.csv", encoding: .utf8)
        #expect(errors.contains("auth-failure"), "bob's wrong password makes auth failures the report must still name")
        // What the run used: the passwords, the invitation code, and any token it was handed (HS256 JWTs
        // start with this header; FCSDK session ids and GCCS tokens are long hex runs).
        let secrets = [Self.password, Self.wrongPassword, Self.invitationCode, "eyJhbGciOiJIUzI1NiIs"]
        let texts =
            try files.map { (name: $0, text: try String(contentsOfFile: "\(out)/\($0)", encoding: .utf8)) }
            + [(name: "stdout", text: captured.out), (name: "stderr", text: captured.err)]
        for (name, text) in texts {
            for secret in secrets {
                #expect(!text.contains(secret), "\(name) contains \(secret)")
            }
            #expect(text.firstMatch(of: /[0-9a-f]{32,}/) == nil, "\(name) contains a long hex run (a session id or token?)")
        }
    }

    @Test("a client key from target.tls appears in no report file and not in the output, on success or on a profile error")
    func clientKey() async throws {
        let pki = try PrivatePKI()
        let keyLines = pki.client.privateKeyPEM.split(separator: "\n").filter { !$0.hasPrefix("-----") }
        try await withStagingServer(pki.server, clientAuthorities: pki.authority) { port in
            let path = try TLSTrustRunTests.profile(
                port: port, tls: #"{"caFile": "ca.pem", "clientCertificate": "client.pem", "clientKey": "client-key.pem"}"#,
                files: [
                    "ca.pem": pki.authority.certificatePEM, "client.pem": pki.client.certificatePEM,
                    "client-key.pem": pki.client.privateKeyPEM
                ])
            let (code, captured) = await TLSTrustRunTests.run(path)
            #expect(code == .success, "\(captured.err)")
            let out = (path as NSString).deletingLastPathComponent + "/report"
            let texts =
                try FileManager.default.contentsOfDirectory(atPath: out).map {
                    (name: $0, text: try String(contentsOfFile: "\(out)/\($0)", encoding: .utf8))
                } + [(name: "stdout", text: captured.out), (name: "stderr", text: captured.err)]
            #expect(texts.contains { $0.name == "result.json" })
            for (name, text) in texts {
                #expect(!text.contains("PRIVATE KEY"), "\(name)")
                for line in keyLines { #expect(!text.contains(line), "\(name) holds a line of the client key") }
            }
        }
        // A key that does not fit its certificate: the error names the file, never what is in it.
        let mismatched = try TLSTrustRunTests.profile(
            port: 8443, tls: #"{"clientCertificate": "client.pem", "clientKey": "server-key.pem"}"#,
            files: ["client.pem": pki.client.certificatePEM, "server-key.pem": pki.server.privateKeyPEM])
        let captured = Captured()
        #expect(await Authload.main(["validate", mismatched], console: captured.console) == .usage)
        #expect(captured.err == "error: staging.json: target.tls.clientKey: \"server-key.pem\" does not fit the client certificate\n")
    }
}
