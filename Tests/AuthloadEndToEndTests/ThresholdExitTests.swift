import AuthloadCLI
import AuthloadCore
import Foundation
import Testing

/// `authload run` in process against the embedded server on loopback: the exit code and junit.xml a CI job reads.
@Suite("Threshold verdicts of a real run", .serialized, .timeLimit(.minutes(1)))
struct ThresholdExitTests {
    static func profile(max: String) -> String {
        """
        {"name": "gate", "target": {"embedded": {"fcsdk": {"latency": {"fixed": "5ms"}}}},
         "load": {"users": 5, "duration": "1s", "thinkTime": "100ms", "gracefulStop": "2s"},
         "flows": [{"name": "login", "kind": "fcsdk-login"}],
         "thresholds": [{"metric": "login.login", "percentile": 99, "max": "\(max)"}]}
        """
    }

    func run(max: String) async throws -> (ExitCode, junit: String, Captured) {
        let path = try temporaryFile("gate.json", Self.profile(max: max))
        let out = (path as NSString).deletingLastPathComponent + "/report"
        let captured = Captured()
        let code = await Authload.main(["run", path, "--out", out, "--quiet"], console: captured.console)
        return (code, try String(contentsOfFile: out + "/junit.xml", encoding: .utf8), captured)
    }

    @Test("a failing threshold exits 2 and writes a failing JUnit test case")
    func failingThreshold() async throws {
        let (code, junit, captured) = try await run(max: "1ms")
        #expect(code == .thresholdFailed, "stderr: \(captured.err)")
        #expect(captured.err.hasPrefix("error: 1 of 1 thresholds failed: login.login p99 ≤ 1ms measured "))
        #expect(
            junit.contains(
                "<testcase classname=\"authload.gate.thresholds\" name=\"login.login p99 ≤ 1ms\" time=\"0\">\n"
                    + "      <failure type=\"threshold\" message=\"measured "))
        #expect(junit.contains("<testsuites name=\"authload\" tests=\"2\" failures=\"1\""))
    }

    @Test("a passing threshold exits 0 and its JUnit test case passes")
    func passingThreshold() async throws {
        let (code, junit, captured) = try await run(max: "2s")
        #expect(code == .success, "stderr: \(captured.err)")
        #expect(
            junit.contains(
                "<testcase classname=\"authload.gate.thresholds\" name=\"login.login p99 ≤ 2s\" time=\"0\">\n"
                    + "      <system-out>measured "))
        #expect(!junit.contains("<failure"))
    }
}
