import AuthloadCLI
import AuthloadCore
import Foundation
import Testing

/// GCCS through the real transport: REST and a STOMP status stream over ws:// and wss:// on 127.0.0.1.
@Suite("authload run of the GCCS flow over loopback", .serialized, .timeLimit(.minutes(1)))
struct GCCSRunTests {
    static func profile(tls: Bool, extraFlowOptions: String = "") -> String {
        """
        {"name": "gccs", "target": {"embedded": {"tls": \(tls), "gccs": {"nodeDelay": {"fixed": "20ms"}}}\(tls ? ", \"insecureSkipTLSVerify\": true" : "")},
         "load": {"users": 30, "rampUp": "300ms", "duration": "2s", "thinkTime": "20ms", "gracefulStop": "3s"},
         "flows": [{"name": "gccs", "kind": "gccs-auth"\(extraFlowOptions)}]}
        """
    }

    func run(_ profile: String) async throws -> (code: ExitCode, summary: String, err: String) {
        let path = try temporaryFile("gccs.json", profile)
        let out = (path as NSString).deletingLastPathComponent + "/report"
        let captured = Captured()
        let code = await Authload.main(["run", path, "--out", out, "--quiet"], console: captured.console)
        let summary = (try? String(contentsOfFile: out + "/summary.csv", encoding: .utf8)) ?? ""
        return (code, summary, captured.err)
    }

    /// The `count` and `errors` columns of a summary.csv row.
    func counts(_ summary: String, flow: String, step: String) -> (count: Int, errors: Int)? {
        // CSV rows end in CRLF, which Swift reads as one Character: split on any newline.
        guard let row = summary.split(whereSeparator: \.isNewline).first(where: { $0.hasPrefix("\(flow),\(step),") }) else { return nil }
        let cells = row.split(separator: ",", omittingEmptySubsequences: false)
        guard cells.count > 3, let count = Int(cells[2]), let errors = Int(cells[3]) else { return nil }
        return (count, errors)
    }

    @Test("over ws:// every authentication completes, a share cancels, and each status has its row")
    func plain() async throws {
        let result = try await run(Self.profile(tls: false, extraFlowOptions: #", "cancelRatio": 0.3"#))
        #expect(result.code == .success, "\(result.err)")
        let flow = try #require(counts(result.summary, flow: "gccs", step: ""), "\(result.summary)")
        #expect(flow.count >= 30)
        #expect(flow.errors == 0)
        for step in ["auth", "connect", "nodes", "CreateChannel", "CompleteVerificationOfNodes gap", "AuthCompleted", "token", "disconnect"]
        {
            let row = try #require(counts(result.summary, flow: "gccs", step: step), "\(step)")
            #expect(row.count > 0 && row.errors == 0, "\(step)")
        }
        let cancels = try #require(counts(result.summary, flow: "gccs", step: "AuthCanceled"))
        #expect(cancels.count > 0 && cancels.count < flow.count)
    }

    @Test("over wss:// to the self-signed embedded server the status stream works with insecureSkipTLSVerify")
    func secure() async throws {
        let result = try await run(Self.profile(tls: true))
        #expect(result.code == .success, "\(result.err)")
        let statuses = try #require(counts(result.summary, flow: "gccs", step: "CompleteVerificationOfNodes"))
        #expect(statuses.count > 0 && statuses.errors == 0)
    }
}
