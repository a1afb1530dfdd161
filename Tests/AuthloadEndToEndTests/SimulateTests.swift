import AuthloadCore
import AuthloadReport
import AuthloadSimulation
import AuthloadStaging
import AuthloadTransport
import Foundation
import Testing

@testable import AuthloadCLI

/// `authload run --simulate`: the real command on virtual time, against the embedded services in process.
@Suite("Simulated runs", .serialized, .timeLimit(.minutes(2)))
struct SimulateTests {
    /// Runs `authload` with these arguments; its exit code, what it printed, and the report's `result.json`.
    func authload(_ arguments: [String], quiet: Bool = true) async throws -> (ExitCode, Captured, RunResult?) {
        let directory = try scratchDirectory("simulate")
        let captured = Captured()
        let code = await Authload.main(arguments + ["--out", directory] + (quiet ? ["--quiet"] : []), console: captured.console)
        let result = try? ReportWriter.load(resultJSON: (directory as NSString).appendingPathComponent("result.json"))
        return (code, captured, result)
    }

    /// All four flows, Streem sessions refreshing, against the embedded services' models.
    func mixedProfile(seed: Int, users: Int = 150, duration: String = "20s") throws -> String {
        try temporaryFile(
            "mixed-\(seed).json",
            """
            {
              "name": "mixed", "seed": \(seed),
              "target": { "embedded": {
                  "fcsdk": { "latency": { "lognormal": { "median": "8ms", "p99": "60ms" } }, "errorRate": 0.01 },
                  "gccs": { "nodeDelay": { "lognormal": { "median": "200ms", "p99": "1s" } } },
                  "okta": { "latency": { "lognormal": { "median": "5ms", "p99": "40ms" } }, "dispatchLatency": { "fixed": "150ms" } },
                  "streem": { "tokenLifetime": "5s" } } },
              "load": { "users": \(users), "rampUp": "2s", "duration": "\(duration)", "thinkTime": { "min": "200ms", "max": "1s" },
                        "gracefulStop": "20s" },
              "users": { "username": "user{n}@example.com", "password": "demo-password", "fields": { "invitationCode": "2{n:8}" } },
              "flows": [
                { "name": "login", "kind": "fcsdk-login", "weight": 50, "hold": { "min": "200ms", "max": "1s" } },
                { "name": "mfa", "kind": "okta-idx-mfa", "weight": 30, "factor": "email" },
                { "name": "gccs", "kind": "gccs-auth", "weight": 30, "cancelRatio": 0.05 },
                { "name": "streem", "kind": "streem-session", "weight": 20, "hold": "12s", "callInterval": "2s", "refreshJitter": "1s" }
              ],
              "timeouts": { "step": "10s", "flow": "1m" }
            }
            """)
    }

    /// What two runs of one seed must share: every series' counts and histogram, the rows, the errors, the verdicts.
    func measured(_ result: RunResult) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return try encoder.encode([
            try encoder.encode(result.metrics), try encoder.encode(result.timeseries), try encoder.encode(result.errors),
            try encoder.encode(result.thresholds)
        ])
    }

    @Test("The demo profile simulated opens no socket, and its report, JUnit and result.json say simulated")
    func demoOpensNoSocket() async throws {
        // The count is process-wide: like the other socket counts the suite reads, it relies on suites running one
        // after another (`swift test --no-parallel`, as CI runs them).
        let before = OpenSockets.tcpSocketsMade
        let (code, captured, result) = try await authload(["run", packageRoot.path + "/Profiles/demo.json", "--simulate"], quiet: false)
        #expect(OpenSockets.tcpSocketsMade == before, "a simulation made TCP sockets")
        #expect(code == .success, "\(captured.err)")
        let run = try #require(result)
        #expect(run.environment.simulated == true)
        #expect(run.environment.target.contains("simulated"))
        #expect(run.status == .completed)
        #expect(run.durationSeconds >= 25 && run.durationSeconds < 31, "virtual duration \(run.durationSeconds)")
        let flows = try #require(run.metrics.first { $0.id.step == nil })
        // 2,000 users looping login (hold 0.5–2 s) and think 1–3 s for 25 s: thousands of flows, a few 503s (errorRate 0.5 %).
        #expect(flows.count > 10_000)
        #expect(flows.errors > 0 && Double(flows.errors) / Double(flows.count) < 0.02)
        #expect(run.notes.contains { $0.hasPrefix("Simulated:") })
        #expect(JUnitWriter.render(run).contains("<property name=\"simulated\" value=\"true\"/>"))
        #expect(HTMLReport.render(run).contains("status-simulated"))
        #expect(captured.out.contains("simulated in process on virtual time"))
        #expect(captured.out.contains("of virtual time in"))
    }

    @Test("Two simulations with one seed measure the same histograms and counts; another seed measures others")
    func deterministic() async throws {
        let profile = try mixedProfile(seed: 1)
        let (firstCode, firstOut, first) = try await authload(["simulate", profile])
        let (_, _, second) = try await authload(["simulate", profile])
        let (_, _, other) = try await authload(["simulate", try mixedProfile(seed: 2)])
        #expect(firstCode == .success, "\(firstOut.err)")
        let a = try #require(first)
        let b = try #require(second)
        let c = try #require(other)
        // Every flow ran, the Streem sessions refreshed and the GCCS status streams delivered.
        for flow in ["login", "mfa", "gccs", "streem"] {
            #expect((a.metrics.first { $0.id == MetricID(flow: flow, step: nil) }?.count ?? 0) > 10, "\(flow) ran")
        }
        #expect((a.metrics.first { $0.id == MetricID(flow: "streem", step: "refresh") }?.count ?? 0) > 0)
        #expect(try measured(a) == measured(b))
        #expect(a.metrics.map(\.count) == b.metrics.map(\.count))
        #expect(try measured(a) != measured(c))
    }

    @Test("A simulated run of all four flows takes no job from another thread but its first: no job left the thread")
    func jobsStayOnTheThread() async throws {
        let profile = try LoadedProfile.load(try mixedProfile(seed: 5, users: 40, duration: "10s"))
        let simulation = SimulatedRun(plan: profile.plan, flows: profile.flows, staging: profile.staging ?? StagingConfiguration())
        let outcome = await simulation.run()
        #expect(outcome.iterations > 40)
        // A job that went to Swift's pool would come back through the inbox, as the first job from the caller's thread does.
        #expect(simulation.executor.jobsFromOtherThreads == 1)
        // Users' tasks prefer no executor: the clock's wakes go by Swift's global executor, which keeps them here.
        #expect(simulation.executor.jobsFromGlobalExecutor > 0)
    }

    @Test("compare refuses a simulated run beside a real one unless asked, and says why")
    func compareRefusesSimulated() async throws {
        let (_, _, simulated) = try await authload(["simulate", try mixedProfile(seed: 3, users: 20, duration: "3s")])
        var run = try #require(simulated)
        let simulatedPath = try temporaryFile("simulated.json", String(decoding: try JSONEncoder().encode(run), as: UTF8.self))
        run.environment.simulated = nil
        let realPath = try temporaryFile("real.json", String(decoding: try JSONEncoder().encode(run), as: UTF8.self))

        let refused = Captured()
        #expect(await Authload.main(["compare", realPath, simulatedPath], console: refused.console) == .usage)
        #expect(refused.err.contains("is a simulation"))
        #expect(refused.err.contains("--allow-simulated"))
        let allowed = Captured()
        #expect(await Authload.main(["compare", realPath, simulatedPath, "--allow-simulated"], console: allowed.console) == .success)
        let same = Captured()
        #expect(await Authload.main(["compare", simulatedPath, simulatedPath], console: same.console) == .success)
    }

    @Test("--config needs --simulate, and a simulation takes no --start-at")
    func usage() async throws {
        let captured = Captured()
        #expect(await Authload.main(["run", "p.json", "--config", "c.json"], console: captured.console) == .usage)
        #expect(captured.err.contains("--config needs --simulate"))
        #expect(await Authload.main(["simulate", "p.json", "--start-at", "+1s"], console: captured.console) == .usage)
        #expect(captured.err.contains("virtual time"))
    }

    @Test("The capacity profile simulated with 8 workers of 10 ms finds the knee at 800/s, where the model saturates")
    func capacityKnee() async throws {
        let stages = stride(from: 100, through: 1500, by: 100).map {
            #"{"duration": "0s", "target": \#($0)}, {"duration": "1s", "target": \#($0)}"#
        }
        let profile = try temporaryFile(
            "capacity.json",
            """
            {"name": "capacity", "target": {"baseURL": "http://192.0.2.1:9"},
             "load": {"model": "open", "maxUsers": 5000, "stages": [\(stages.joined(separator: ", "))], "gracefulStop": "5s"},
             "flows": [{"name": "login", "kind": "http", "method": "POST", "path": "/csdk-sample/SDK/login",
                        "headers": {"Content-Type": "application/json"},
                        "body": "{\\"username\\": \\"user1\\", \\"password\\": \\"demo-password\\"}"}],
             "timeouts": {"step": "5s", "flow": "10s"},
             "thresholds": [{"metric": "login", "percentile": 99, "max": "50ms"}]}
            """)
        let config = try temporaryFile(
            "model.json", #"{"fcsdk": {"latency": {"fixed": "10ms"}}, "capacity": {"workers": 8, "queue": 1000}}"#)
        let before = OpenSockets.tcpSocketsMade
        let (code, captured, result) = try await authload(["run", profile, "--simulate", "--config", config])
        #expect(OpenSockets.tcpSocketsMade == before, "the profile's URL was not contacted")
        #expect(code == .thresholdFailed, "steps past saturation fail the SLO by design: \(captured.err)")
        let run = try #require(result)
        let capacity = try #require(run.capacity)
        let last = try #require(capacity.lastPassingStage.map { capacity.stages[$0] })
        #expect(last.label == "800" || last.label == "700", "last stage inside the SLO: \(last.label)")
        let knee = try #require(capacity.kneeStage.map { capacity.stages[$0] })
        #expect(knee.target == last.target + 100)
        let top = try #require(capacity.stages.last)
        #expect((top.throughput - 800).magnitude < 40, "throughput levels off at the model's 800/s, found \(top.throughput)")
    }

    @Test("A 24-hour soak on virtual time: checkpoints hourly, every window judged, refreshes at the token lifetime, no drift")
    func nightInSeconds() async throws {
        // 3 arrivals a minute for 24 h, each a 10-minute Streem session whose 2-minute token is refreshed 10 s before it
        // expires (no jitter): a refresh every 110 s, 5 in a session.
        let profile = try temporaryFile(
            "night.json",
            """
            {"name": "night", "target": {"embedded": {"streem": {"tokenLifetime": "2m"}}},
             "load": {"model": "open", "arrivalRate": "3/m", "maxUsers": 1000, "duration": "24h", "gracefulStop": "15m"},
             "users": {"username": "user{n}@example.com", "fields": {"invitationCode": "2{n:8}"}},
             "flows": [{"name": "streem", "kind": "streem-session", "hold": "10m", "callInterval": "5m",
                        "refreshLead": "10s", "refreshJitter": "0s"}],
             "metrics": {"interval": "1m", "checkpoint": "1h"},
             "timeouts": {"step": "10s", "flow": "15m"},
             "thresholds": [{"metric": "streem.redeem", "minThroughput": 0.049, "window": "1h"},
                            {"metric": "streem.call", "percentile": 99, "max": "1s", "window": "1h"}]}
            """)
        let (code, captured, result) = try await authload(["simulate", profile], quiet: false)
        #expect(code == .success, "\(captured.err)")
        let run = try #require(result)
        #expect(run.status == .completed)
        #expect(run.durationSeconds >= 86_400 && run.durationSeconds < 86_400 + 15 * 60)

        // A checkpoint every virtual hour, each saving the 60 one-minute intervals finished since the last.
        let saved = captured.out.split(separator: "\n").compactMap { line -> Int? in
            guard line.hasPrefix("checkpoint: ") else { return nil }
            return Int(line.dropFirst("checkpoint: ".count).prefix { $0.isNumber })
        }
        #expect(saved.count == 24, "checkpoints: \(saved)")
        #expect(zip(saved, saved.dropFirst()).allSatisfy { $1 - $0 == 60 }, "checkpoints: \(saved)")

        // No drift: every minute of the day started exactly its 3 sessions, on time, and every hour's window was
        // judged with all of its 180 (the worst window holds as many as the schedule put in it).
        let day = run.timeseries.filter { $0.index < 24 * 60 }
        #expect(day.count == 24 * 60)
        let redeem = MetricID(flow: "streem", step: "redeem")
        #expect(day.allSatisfy { row in row.metrics.first { $0.id == redeem }?.count == 3 })
        #expect(try #require(run.generator).lagMaxMicros <= 1)
        for verdict in run.thresholds {
            #expect(verdict.passed, "\(verdict.name)")
            #expect(verdict.windowSeconds == 3600)
        }
        let throughput = try #require(run.thresholds.first { $0.kind == .throughput }?.measured)
        #expect((throughput - 0.05).magnitude < 1e-9, "worst hour: \(throughput)/s")

        // Refreshes at the token's lifetime: 5 in every session, and no token expired before its refresh.
        let count = { (step: String?) in run.metrics.first { $0.id == MetricID(flow: "streem", step: step) }?.count ?? -1 }
        #expect(count(nil) == 3 * 60 * 24)
        #expect(count("refresh") == 5 * count(nil))
        #expect(count("expired") == 0)
        #expect(run.metrics.allSatisfy { $0.errors == 0 })
    }

    @Test("A stop request from another thread, as Ctrl-C's, drains a simulated day at the virtual minute it came")
    func stopDrains() async throws {
        let path = try mixedProfile(seed: 4, users: 10, duration: "24h")
        let profile = try LoadedProfile.load(path)
        let simulation = SimulatedRun(plan: profile.plan, flows: profile.flows, staging: profile.staging ?? StagingConfiguration())
        let clock = simulation.clock
        let control = simulation.runner.control
        let outcome = await simulation.run {
            try? await clock.sleep(until: .init(offset: .seconds(600)))
            requestStop(control, fromAnotherThreadAwaitedBy: "the simulation's thread")
        }
        #expect(outcome.stoppedEarly)
        // Drained within its grace (20 s) after the stop at minute 10, nowhere near the planned 24 h.
        #expect(outcome.elapsed >= .seconds(600) && outcome.elapsed <= .seconds(600 + 21), "\(outcome.elapsed)")
        #expect(outcome.iterations > 100)
    }

    /// Asks `control` to stop from a thread of the global pool, as the signal handler does, while the calling thread
    /// waits for it: a simulation's clock cannot move meanwhile, so the request lands at the virtual instant of the
    /// call however late the other thread runs (awaited instead, it landed up to a virtual minute late on a busy
    /// machine, while the clock advanced past the sleeping caller).
    private func requestStop(_ control: RunControl, fromAnotherThreadAwaitedBy waiter: String) {
        let requested = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            control.requestStop()
            requested.signal()
        }
        #expect(requested.wait(timeout: .now() + 60) == .success, "\(waiter) waited a minute for the stop request")
    }
}
