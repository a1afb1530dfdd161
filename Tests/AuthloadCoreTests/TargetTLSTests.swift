import AuthloadCore
import Testing

@Suite("target.tls in a profile")
struct TargetTLSTests {
    /// A profile whose target is `target` (the members of the target object, as JSON text).
    static func parse(_ target: String) throws(ProfileError) -> RunPlan {
        try Profile.parse(
            """
            {"name": "tls", "target": {\(target)}, "load": {"users": 1, "duration": "1s"},
             "flows": [{"name": "login", "kind": "fcsdk-login"}]}
            """, fileName: "tls.json")
    }

    @Test("every key is read, as paths and a name; without target.tls the plan has none")
    func readsEveryKey() throws {
        let plan = try Self.parse(
            #""baseURL": "https://10.0.0.5:8443", "tls": {"caFile": "ca.pem", "addSystemRoots": true, "serverName": "staging.example.com", "#
                + #""clientCertificate": "client.pem", "clientKey": "client-key.pem"}"#)
        #expect(
            plan.connections.tls
                == TargetTLS(
                    caFile: "ca.pem", addSystemRoots: true, serverName: "staging.example.com", clientCertificate: "client.pem",
                    clientKey: "client-key.pem"))
        #expect(try Self.parse(#""baseURL": "https://auth.example.com""#).connections.tls == TargetTLS())
    }

    @Test("resumeSessions is on unless the profile turns it off, for a baseURL or the embedded server, and reaches the settings")
    func resumeSessions() throws {
        #expect(try Self.parse(#""baseURL": "https://auth.example.com""#).connections.tls.resumeSessions)
        #expect(try Self.parse(#""baseURL": "https://a.example.com", "tls": {"resumeSessions": true}"#).connections.tls.resumeSessions)
        let off = try Self.parse(#""baseURL": "https://a.example.com", "tls": {"resumeSessions": false, "serverName": "b.example.com"}"#)
        #expect(!off.connections.tls.resumeSessions && off.connections.tls.serverName == "b.example.com")
        let embedded = try Self.parse(#""embedded": {"tls": true}, "tls": {"resumeSessions": false}"#)
        #expect(!embedded.connections.tls.resumeSessions)
    }

    @Test("insecureSkipTLSVerify still works alone, and beside a server name or a client certificate")
    func insecureAlone() throws {
        #expect(try Self.parse(#""baseURL": "https://10.0.0.5", "insecureSkipTLSVerify": true"#).connections.tls.insecureSkipTLSVerify)
        let plan = try Self.parse(
            #""baseURL": "https://10.0.0.5", "insecureSkipTLSVerify": true, "tls": {"serverName": "a.example.com", "clientCertificate": "c.pem", "clientKey": "k.pem"}"#
        )
        #expect(plan.connections.tls.insecureSkipTLSVerify && plan.connections.tls.serverName == "a.example.com")
    }

    @Test(
        "settings that cannot work are refused with the key and the reason",
        arguments: [
            (
                #""embedded": {"tls": true}, "tls": {"caFile": "ca.pem"}"#,
                "target.tls: is for a baseURL target; the embedded server makes a new certificate for each run"
            ),
            (
                #""baseURL": "http://10.0.0.5", "tls": {"caFile": "ca.pem"}"#,
                "target.tls: the baseURL is http://; TLS settings need an https:// baseURL"
            ),
            (
                #""baseURL": "https://10.0.0.5", "tls": {"clientCertificate": "c.pem"}"#,
                "target.tls: clientCertificate needs clientKey (the PEM private key of that certificate)"
            ),
            (
                #""baseURL": "https://10.0.0.5", "tls": {"clientKey": "k.pem"}"#,
                "target.tls: clientKey needs clientCertificate (the PEM certificate of that key)"
            ),
            (
                #""baseURL": "https://10.0.0.5", "tls": {"addSystemRoots": true}"#,
                "target.tls.addSystemRoots: means something only beside caFile (without caFile the system's CAs are trusted anyway)"
            ),
            (
                #""baseURL": "https://10.0.0.5", "tls": {"serverName": "a b"}"#,
                #"target.tls.serverName: must be a DNS name such as "staging.example.com""#
            ),
            (#""baseURL": "https://10.0.0.5", "tls": {"caFile": ""}"#, "target.tls.caFile: must be the path of a PEM file"),
            (
                #""baseURL": "https://10.0.0.5", "tls": {"resumeSessions": "no"}"#,
                "target.tls.resumeSessions: expected true or false, found a string"
            ),
            (
                #""embedded": {"tls": true}, "tls": {"resumeSessions": false, "caFile": "ca.pem"}"#,
                "target.tls: is for a baseURL target; the embedded server makes a new certificate for each run"
            ),
            (
                #""baseURL": "https://10.0.0.5", "insecureSkipTLSVerify": true, "tls": {"caFile": "ca.pem"}"#,
                "target.insecureSkipTLSVerify: accepts any certificate, so target.tls.caFile would never be used: give one or the other"
            )
        ])
    func refused(target: String, message: String) {
        do {
            _ = try Self.parse(target)
            Issue.record("accepted: \(target)")
        } catch {
            #expect(error.description == message)
        }
    }

    @Test("each TLS failure's advice names the profile key that fixes it")
    func advice() throws {
        let keys: [TLSFailure.Cause: String] = [
            .untrustedIssuer: "target.tls.caFile", .verificationFailed: "target.tls.caFile", .expired: "target.insecureSkipTLSVerify",
            .nameMismatch: "target.tls.serverName", .clientCertificateRequired: "target.tls.clientKey",
            .clientCertificateRefused: "target.tls.clientCertificate"
        ]
        for cause in TLSFailure.Cause.allCases {
            let failure = TLSFailure(cause, reason: "r", peer: "10.0.0.5")
            #expect(failure.profileAdvice.contains(try #require(keys[cause])), "\(cause)")
            let outcome = Outcome(TransportError(failure))
            #expect(outcome.kind == .transportError)
            #expect(outcome.detail == "tls: \(failure) (\(failure.profileAdvice))")
            #expect(!outcome.detail.contains("\n"))
        }
    }
}
