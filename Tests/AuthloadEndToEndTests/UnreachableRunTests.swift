import AuthloadCLI
import AuthloadCore
import AuthloadReport
import Foundation
import Testing

/// `authload run` in process against a closed loopback port: it backs off, stops once nothing has succeeded for
/// `generator.unreachableAfter`, says why in one line, exits 1, and still writes its report.
@Suite("A run against a target that does not answer", .serialized, .timeLimit(.minutes(1)))
struct UnreachableRunTests {
    @Test("a closed port ends the run within unreachableAfter + 5 s: exit 1, one line naming the target and cause, a report")
    func closedPort() async throws {
        // Port 1 on loopback: nothing listens there, so every connect(2) is refused at once.
        let path = try temporaryFile(
            "unreachable.json",
            """
            {"name": "unreachable", "target": {"baseURL": "http://127.0.0.1:1"},
             "load": {"users": 10, "duration": "60s", "thinkTime": "0s"},
             "flows": [{"name": "login", "kind": "fcsdk-login"}],
             "generator": {"unreachableAfter": "2s"}}
            """)
        let out = (path as NSString).deletingLastPathComponent + "/report"
        let captured = Captured()
        let clock = ContinuousClock()
        let started = clock.now
        let code = await Authload.main(["run", path, "--out", out, "--quiet"], console: captured.console)
        let took = started.duration(to: clock.now)
        #expect(code == .runError, "stderr: \(captured.err)")
        #expect(took < .seconds(7), "\(took)")
        #expect(
            captured.err
                == "error: http://127.0.0.1:1: connection refused, 0 successes in 2 s; the run stopped (generator.unreachableAfter)\n")
        let result = try ReportWriter.load(resultJSON: out + "/result.json")
        #expect(result.status == .failed)
        #expect(result.notes.first?.hasPrefix("http://127.0.0.1:1: connection refused, 0 successes in 2 s") == true)
        // Backed off: ten users, no think time, a few flows each rather than hundreds of thousands.
        let flows = try #require(result.metrics.first { $0.id == MetricID(flow: "login", step: nil) })
        #expect(flows.count > 0 && flows.count <= 10 * 12 && flows.errors == flows.count, "\(flows.count) flows")
        #expect(FileManager.default.fileExists(atPath: out + "/report.html"))
        let junit = try String(contentsOfFile: out + "/junit.xml", encoding: .utf8)
        #expect(junit.contains("name=\"run failed\"") && junit.contains("connection refused, 0 successes in 2 s"), "\(junit)")
    }
}
