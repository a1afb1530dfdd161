import AuthloadCore
import AuthloadTransport
import Testing

@testable import AuthloadCLI

@Suite("target.tls.resumeSessions from profile to TLS settings")
struct ResumeSessionsSettingTests {
    static func configuration(_ target: String) throws -> TLSClientConfiguration {
        let plan = try Profile.parse(
            """
            {"name": "tls", "target": {\(target)}, "load": {"users": 1, "duration": "1s"},
             "flows": [{"name": "login", "kind": "fcsdk-login"}]}
            """, fileName: "tls.json")
        return try LoadedProfile.tlsConfiguration(plan, readFile: { _ in nil })
    }

    @Test("the transport's TLS settings resume sessions unless the profile turns it off, for a baseURL or the embedded server")
    func carried() throws {
        #expect(try Self.configuration(#""baseURL": "https://a.example.com""#).resumeSessions)
        #expect(try !Self.configuration(#""baseURL": "https://a.example.com", "tls": {"resumeSessions": false}"#).resumeSessions)
        let embedded = try Self.configuration(
            #""embedded": {"tls": true}, "insecureSkipTLSVerify": true, "tls": {"resumeSessions": false}"#)
        #expect(!embedded.resumeSessions && embedded.skipsCertificateVerification)
    }
}
