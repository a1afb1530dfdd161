import AuthloadCLI
import AuthloadCore
import Foundation
import Testing

/// The Okta flow against an IDX org written apart from ours (`Interop/idx_server.py`, Python's standard library only),
/// answering as real orgs with several authenticators do: the password offered among Email and Phone, the phone's
/// method asked for through verification data, hrefs on another origin.
@Suite("authload run of the Okta IDX flow against an independent org", .serialized, .timeLimit(.minutes(1)))
struct OktaInteropTests {
    /// Isolated mode: nothing in the working directory or the environment can shadow the standard library.
    static let python = ["/usr/bin/env", "python3", "-I"]

    static func profile(port: Int, factors: String) -> String {
        """
        {"name": "okta-interop", "target": {"baseURL": "http://127.0.0.1:\(port)"},
         "load": {"users": 8, "rampUp": "200ms", "duration": "1500ms", "thinkTime": "50ms", "gracefulStop": "3s"},
         "users": {"username": "user{n}@example.com", "password": "interop-pw"},
         "flows": [{"name": "mfa", "kind": "okta-idx-mfa", "passcode": "246810", "factors": \(factors)}]}
        """
    }

    @Test(
        "every login passes against an org that offers the password among several authenticators",
        arguments: [
            (#"["email"]"#, "challenge-email"), (#"["sms", "email"]"#, "challenge-sms"), (#"["voice"]"#, "challenge-voice")
        ])
    func independentOrg(factors: String, challenge: String) async throws {
        let server = try PythonScript(Self.python, script: "idx_server.py")
        defer { server.stop() }
        let portLine = try #require(await server.line(startingWith: "port "), "\(server.stdout)")
        let port = try #require(Int(portLine.dropFirst(5)))
        let path = try temporaryFile("okta-interop.json", Self.profile(port: port, factors: factors))
        let out = (path as NSString).deletingLastPathComponent + "/report"
        let captured = Captured()
        let code = await Authload.main(["run", path, "--out", out, "--quiet"], console: captured.console)
        #expect(code == .success, "\(captured.err)")
        let summary = (try? String(contentsOfFile: out + "/summary.csv", encoding: .utf8)) ?? ""
        let rows = summary.split(whereSeparator: \.isNewline).map { $0.split(separator: ",", omittingEmptySubsequences: false) }
        func counts(_ step: String) -> (count: Int, errors: Int)? {
            guard let row = rows.first(where: { $0.count > 3 && $0[0] == "mfa" && $0[1] == step }) else { return nil }
            return (Int(row[2]) ?? -1, Int(row[3]) ?? -1)
        }
        let flow = try #require(counts(""), "\(summary)")
        #expect(flow.count > 0 && flow.errors == 0, "\((try? String(contentsOfFile: out + "/errors.csv", encoding: .utf8)) ?? "")")
        #expect(counts(challenge)?.count == flow.count)
        #expect(counts("challenge-password")?.count == flow.count)
        #expect(counts("select-authenticator")?.count == 2 * flow.count, "the password, then the factor")
        server.stop()
        #expect(await server.line(startingWith: "tokens ") == "tokens \(flow.count)")
        #expect(await server.line(startingWith: "refused ") == "refused 0")
        // Its output pipe reaches its end before the script object goes: no read is left armed on a closed descriptor.
        #expect(await server.waitForExit() == 0)
    }
}
