import AuthloadCLI
import AuthloadCore
import Foundation
import Testing

/// The Okta IDX flow through the real transport against the embedded staging server on 127.0.0.1.
@Suite("authload run of the Okta IDX flow over loopback", .serialized, .timeLimit(.minutes(1)))
struct OktaRunTests {
    /// Secrets the run uses; none may appear in anything it writes.
    static let password = "pw-Kq8vZr2x"
    static let passcode = "otp-W7mJ3n"

    static func profile(staging: String, flow: String = "") -> String {
        """
        {"name": "okta", "target": {"embedded": {"okta": {"latency": {"fixed": "2ms"}, "passcode": "\(passcode)",
           "password": "\(password)"\(staging)}}},
         "load": {"users": 30, "rampUp": "300ms", "duration": "2s", "thinkTime": "20ms", "gracefulStop": "3s"},
         "users": {"username": "user{n}@example.com", "password": "\(password)"},
         "flows": [{"name": "mfa", "kind": "okta-idx-mfa", "passcode": "\(passcode)"\(flow)}]}
        """
    }

    func run(_ profile: String) async throws -> (code: ExitCode, out: String, err: String) {
        let path = try temporaryFile("okta.json", profile)
        let out = (path as NSString).deletingLastPathComponent + "/report"
        let captured = Captured()
        let code = await Authload.main(["run", path, "--out", out, "--quiet"], console: captured.console)
        return (code, out, captured.err)
    }

    func read(_ directory: String, _ file: String) -> String {
        (try? String(contentsOfFile: directory + "/" + file, encoding: .utf8)) ?? ""
    }

    /// The `count` and `errors` columns of a summary.csv row.
    func counts(_ summary: String, step: String) -> (count: Int, errors: Int)? {
        guard let row = summary.split(whereSeparator: \.isNewline).first(where: { $0.hasPrefix("mfa,\(step),") }) else { return nil }
        let cells = row.split(separator: ",", omittingEmptySubsequences: false)
        guard cells.count > 3, let count = Int(cells[2]), let errors = Int(cells[3]) else { return nil }
        return (count, errors)
    }

    @Test("every login succeeds over loopback with both factors' steps in the summary", arguments: ["email", "sms"])
    func clean(factor: String) async throws {
        let result = try await run(Self.profile(staging: #", "policy": "single-form""#, flow: #", "factor": "\#(factor)""#))
        #expect(result.code == .success, "\(result.err)")
        let summary = read(result.out, "summary.csv")
        let flow = try #require(counts(summary, step: ""), "\(summary)")
        #expect(flow.count >= 30 && flow.errors == 0)
        for step in ["interact", "introspect", "identify", "select-authenticator", "challenge-\(factor)", "token"] {
            let row = try #require(counts(summary, step: step), "\(step)")
            #expect(row.count == flow.count && row.errors == 0, "\(step)")
        }
    }

    @Test(
        "every policy shape of the embedded org passes over loopback with each round trip counted",
        arguments: [
            (
                "select-first", #"["email", "sms", "voice"]"#, #""factors": ["voice"]"#,
                ["select-authenticator": 2, "challenge-password": 1, "verification-data": 1, "challenge-voice": 1]
            ),
            (
                "factor-first", #"["sms", "email"]"#, #""factors": ["sms", "email"]"#,
                ["select-authenticator": 1, "challenge-sms": 1, "challenge-password": 1]
            ),
            ("security-question", #"["email"]"#, #""factor": "email""#, ["challenge-password": 1, "challenge-question": 1])
        ])
    func policy(name: String, offered: String, factors: String, steps: [String: Int]) async throws {
        let profile = Self.profile(
            staging: #", "policy": "\#(name)", "factors": \#(offered), "securityAnswer": "broccoli""#, flow: ", " + factors
        ).replacingOccurrences(of: #""users": {"username""#, with: #""users": {"fields": {"securityAnswer": "broccoli"}, "username""#)
        let result = try await run(profile)
        #expect(result.code == .success, "\(result.err)")
        let summary = read(result.out, "summary.csv")
        let flow = try #require(counts(summary, step: ""), "\(summary)")
        #expect(flow.count >= 30 && flow.errors == 0, "\(read(result.out, "errors.csv"))")
        for (step, perFlow) in steps {
            let row = try #require(counts(summary, step: step), "\(step)")
            #expect(row.count == perFlow * flow.count && row.errors == 0, "\(step)")
        }
    }

    @Test("a rate-limited introspect over loopback is waited out by the server's Date and retried, never an error")
    func rateLimited() async throws {
        let profile = Self.profile(
            staging: #", "rateLimit": {"limit": 25, "window": "1s", "paths": ["/idp/idx/introspect"]}"#,
            flow: #", "maxRetries": 20"#
        ).replacingOccurrences(of: #""thinkTime": "20ms""#, with: #""thinkTime": "300ms""#)
        let result = try await run(profile)
        #expect(result.code == .success, "\(result.err)")
        let summary = read(result.out, "summary.csv")
        let flow = try #require(counts(summary, step: ""), "\(summary)")
        let retries = try #require(counts(summary, step: "retry"))
        #expect(flow.count > 0 && flow.errors == 0, "\(read(result.out, "errors.csv"))")
        #expect(retries.count > 0 && retries.errors == 0, "30 users want more than 25 introspects a second")
        #expect(counts(summary, step: "introspect")?.count == flow.count, "a retried introspect is one sample")
    }

    @Test("wrong passcodes are counted as auth failures keyed api.authn.error.PASSCODE_INVALID in errors.csv, and no secret is written")
    func wrongPasscodes() async throws {
        let result = try await run(Self.profile(staging: #", "wrongPasscodeRate": 0.3"#))
        #expect(result.code == .success, "\(result.err)")
        let errors = read(result.out, "errors.csv")
        let rows = errors.split(whereSeparator: \.isNewline)
        let prefix = "mfa,challenge-email,auth-failure,api.authn.error.PASSCODE_INVALID,"
        let row = try #require(rows.first { $0.hasPrefix(prefix) }, "\(errors)")
        #expect((Int(row.dropFirst(prefix.count)) ?? 0) > 0)
        // The flow's own row carries the same key; nothing else failed.
        #expect(rows.dropFirst().allSatisfy { $0.contains("api.authn.error.PASSCODE_INVALID") }, "\(errors)")
        let files = try FileManager.default.contentsOfDirectory(atPath: result.out)
        #expect(files.contains("result.json") && files.contains("report.html"))
        for file in files {
            let text = read(result.out, file)
            #expect(!text.contains(Self.password) && !text.contains(Self.passcode), "\(file) holds a secret")
        }
    }
}
