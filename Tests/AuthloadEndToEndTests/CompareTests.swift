import AuthloadCore
import AuthloadFlows
import AuthloadReport
import AuthloadTesting
import Foundation
import Testing

@testable import AuthloadCLI

@Suite("authload compare", .timeLimit(.minutes(1)))
struct CompareTests {
    let endpoint = Endpoint(host: "127.0.0.1", port: 1)

    /// A 30 s virtual-time run of two flows — `login` (POST /login) and `health` (GET /health, 5 ms) —
    /// with the login taking `login`; returns the report directory.
    func runReport(login: Duration, users: Int = 4, digest: String = "0123456789abcdef") async throws -> String {
        let clock = ManualClock()
        let transport = SimulatedTransport(clock: clock) { request, _ in
            ServiceReply(HTTPResponse(status: 200), after: request.path == "/login" ? login : .milliseconds(5))
        }
        var loginOptions = HTTPRequestFlow.Options()
        loginOptions.method = "POST"
        loginOptions.path = "/login"
        var healthOptions = HTTPRequestFlow.Options()
        healthOptions.path = "/health"
        let plan = RunPlan(
            name: "nightly", target: .url(TargetURL(endpoint: endpoint)),
            load: LoadPlan(users: users, duration: .seconds(30), thinkTime: .fixed(.milliseconds(500))),
            flows: [
                FlowPlan(name: "login", kind: "http", options: ProfileReader(path: "flows[0]", value: .null)),
                FlowPlan(name: "health", kind: "http", options: ProfileReader(path: "flows[1]", value: .null))
            ],
            users: UserFeeder())
        let runner = Runner(
            plan: plan, flows: [HTTPRequestFlow(options: loginOptions), HTTPRequestFlow(options: healthOptions)],
            transport: transport, endpoint: endpoint, clock: clock)
        let outcome = await clock.drive(runner.control) { await runner.run() }
        let record = PlanRecord(
            profileDigest: digest, overrides: [], seed: 1, windowsFromSeconds: 0, windowsUntilSeconds: 30, commonStartEpochSeconds: nil,
            startedAtEpochSeconds: 0, load: PlannedLoad(plan.load))
        let result = RunResultBuilder.build(
            plan: plan, record: record, outcome: outcome, startedAt: Date(), endedAt: Date(), target: "in process")
        let directory = try scratchDirectory("compare")
        try ReportWriter.write(result, to: directory)
        return directory
    }

    @Test("a 30 % slower login is flagged on the login flow and its step, the unchanged health check is not, and the exit is 2")
    func regressionFlagged() async throws {
        let base = try await runReport(login: .milliseconds(10))
        let slower = try await runReport(login: .milliseconds(13))
        let captured = Captured()
        #expect(await Authload.main(["compare", base, slower], console: captured.console) == .thresholdFailed)
        let lines = captured.out.split(separator: "\n").map(String.init)
        let login = try #require(lines.first { $0.hasPrefix("login.request ") })
        #expect(login.contains("10.0 → 13.0 (+30.0 %)"), "\(login)")
        #expect(login.hasSuffix("REGRESSED: p50, p99"))
        #expect(lines.first { $0.hasPrefix("login ") }?.hasSuffix("REGRESSED: p50, p99") == true)
        #expect(lines.first { $0.hasPrefix("health.request ") }?.hasSuffix(" ok") == true)
        #expect(captured.out.contains("\n\n2 of 4 series regressed beyond the tolerances (p50 +20.0 %, p99 +20.0 %, error rate +1.00 %;"))

        // The same pair within wider tolerances from the flags passes.
        let tolerant = Captured()
        #expect(
            await Authload.main(["compare", base + "/result.json", slower, "--p50", "40%", "--p99", "0.4"], console: tolerant.console)
                == .success)
    }

    @Test("runs under different load are refused with exit 64 naming what differs; --force compares them and says so")
    func differentLoad() async throws {
        let base = try await runReport(login: .milliseconds(10), users: 4)
        let fewer = try await runReport(login: .milliseconds(10), users: 2, digest: "fedcba9876543210")
        let refused = Captured()
        #expect(await Authload.main(["compare", base, fewer], console: refused.console) == .usage)
        #expect(refused.out.isEmpty, "no table")
        let line = try #require(refused.err.split(separator: "\n").first.map(String.init))
        #expect(
            line == "error: BASE and NEW ran different load (users 4 → 2): their latencies and errors differ for that alone; "
                + "--force compares them anyway")

        let forced = Captured()
        #expect(await Authload.main(["compare", base, fewer, "--force"], console: forced.console) == .success)
        #expect(
            forced.out.hasPrefix(
                "plans differ (base → new) — compared anyway (--force): a regression below may be the load's doing:\n"
                    + "  users 4 → 2\n  profile file digest 0123456789abcdef → fedcba9876543210\n\n"), "\(forced.out)")
        #expect(forced.out.contains("login.request "), "the table follows")
    }

    @Test("a different profile file under the same load is said above the table, and compared")
    func differentProfileSameLoad() async throws {
        let base = try await runReport(login: .milliseconds(10))
        let edited = try await runReport(login: .milliseconds(10), digest: "fedcba9876543210")
        let captured = Captured()
        #expect(await Authload.main(["compare", base, edited], console: captured.console) == .success)
        #expect(captured.out.hasPrefix("plans differ (base → new):\n  profile file digest 0123456789abcdef → fedcba9876543210\n\n"))
    }

    @Test("a run compared with itself has no regression and exits 0")
    func selfComparison() async throws {
        let run = try await runReport(login: .milliseconds(10))
        let captured = Captured()
        #expect(await Authload.main(["compare", run, run], console: captured.console) == .success)
        #expect(captured.out.contains("\n\nno regressions beyond the tolerances"))
        #expect(!captured.out.contains("REGRESSED"))
    }

    @Test("tolerances come from the profile's compare section, and a bad one names its field")
    func profileTolerances() throws {
        let plan = try Profile.parse(
            """
            {"name": "p", "target": {"embedded": {}}, "load": {"users": 1, "duration": "1s"}, "flows": [{"name": "a", "kind": "http"}],
             "compare": {"p50": 0.5, "p99": 0.25, "errorRate": 0.02, "minLatencyDelta": "2ms"}}
            """, fileName: "p.json")
        #expect(plan.compare == CompareTolerances(p50: 0.5, p99: 0.25, errorRate: 0.02, minLatencyDelta: .milliseconds(2)))
        do {
            _ = try Profile.parse(
                """
                {"name": "p", "target": {"embedded": {}}, "load": {"users": 1, "duration": "1s"}, "flows": [{"name": "a", "kind": "http"}],
                 "compare": {"p95": 0.5}}
                """, fileName: "p.json")
            Issue.record("expected an error")
        } catch {
            #expect(error.description == "compare.p95: unknown field (expected one of: errorRate, minLatencyDelta, p50, p99)")
        }
    }

    @Test(
        "compare's usage mistakes exit 64 with one line",
        arguments: [
            (["compare", "a.json"], "error: needs BASE and NEW (result.json files or report directories)"),
            (["compare", "a.json", "b.json", "--p99", "lots"], "error: --p99: \"lots\" is not a tolerance (write e.g. 20% or 0.2)"),
            (["compare", "/nonexistent/a.json", "/nonexistent/b.json"], "error: /nonexistent/a.json: no such file or directory")
        ])
    func usage(arguments: [String], message: String) async {
        let captured = Captured()
        #expect(await Authload.main(arguments, console: captured.console) == .usage)
        #expect(captured.err.split(separator: "\n").first.map(String.init) == message)
    }

    @Test("compare has its own help, listed in the overview")
    func help() async {
        let captured = Captured()
        #expect(await Authload.main(["compare", "--help"], console: captured.console) == .success)
        #expect(captured.out == HelpText.text(for: "compare")! + "\n")
        #expect(
            captured.out.hasPrefix(
                "USAGE: authload compare BASE NEW [--p50 T] [--p99 T] [--error-rate T] [--min-delta D] [--profile FILE]\n"))
        #expect(captured.out.contains("  --force             Compare runs whose load differs all the same\n"))
        #expect(HelpText.text(for: nil)!.contains("\n  compare BASE NEW   Compare two runs' result.json; exit 2 on a regression\n"))
    }
}
