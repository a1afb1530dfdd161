import AuthloadCLI
import AuthloadCore
import Foundation
import Testing

@Suite("authload run against an HTTPS embedded server", .serialized, .timeLimit(.minutes(1)))
struct TLSRunTests {
    static func profile(insecure: Bool?) -> String {
        let flag = insecure.map { ", \"insecureSkipTLSVerify\": \($0)" } ?? ""
        return """
            {"name": "tls", "target": {"embedded": {"tls": true, "fcsdk": {"latency": {"fixed": "1ms"}}}\(flag)},
             "load": {"users": 4, "duration": "1s", "thinkTime": "50ms"},
             "flows": [{"name": "login", "kind": "fcsdk-login"}]}
            """
    }

    @Test("without insecureSkipTLSVerify the run fails and says the certificate is self-signed and which keys accept it")
    func verificationOn() async throws {
        let path = try temporaryFile("tls.json", Self.profile(insecure: nil))
        let captured = Captured()
        let code = await Authload.main(
            ["run", path, "--out", (path as NSString).deletingLastPathComponent + "/report", "--quiet"],
            console: captured.console)
        #expect(code == .runError)
        #expect(captured.err.hasPrefix("error: no flow succeeded ("), "\(captured.err)")
        #expect(
            captured.err.contains(
                "most often at login.login: transport-error (tls: certificate verify failed: self-signed certificate "
                    + "(set target.tls.caFile to the PEM of the CA that issued it, or target.insecureSkipTLSVerify to accept any))"),
            "\(captured.err)")
        #expect(!captured.err.contains("warning:"))
    }

    @Test("with insecureSkipTLSVerify the run succeeds, warns once on stderr and notes it in the report")
    func verificationOff() async throws {
        let path = try temporaryFile("tls.json", Self.profile(insecure: true))
        let out = (path as NSString).deletingLastPathComponent + "/report"
        let captured = Captured()
        let code = await Authload.main(["run", path, "--out", out, "--quiet"], console: captured.console)
        #expect(code == .success, "\(captured.err)")
        let warnings = captured.err.split(separator: "\n").filter { $0.hasPrefix("warning:") }
        #expect(warnings.count == 1)
        #expect(warnings.first?.hasPrefix("warning: TLS certificate verification is off for https://127.0.0.1:") == true)
        #expect(warnings.first?.hasSuffix(" (insecureSkipTLSVerify)") == true)
        let result = try String(contentsOfFile: out + "/result.json", encoding: .utf8)
        #expect(result.contains("TLS certificate verification was off (target.insecureSkipTLSVerify)"))
        let summary = try String(contentsOfFile: out + "/summary.csv", encoding: .utf8)
        #expect(summary.contains("login,login,"))
    }
}
