import AuthloadCore
import AuthloadReport
import Foundation
import Testing

@testable import AuthloadCLI

/// `simulate --threads N`: a simulation as N shards on N threads, merged into one report.
@Suite("Simulations on threads", .serialized, .timeLimit(.minutes(2)))
struct SimulateThreadsTests {
    let simulate = SimulateTests()

    @Test("Two threads give one simulated report of every user, the same for one seed and another for another seed")
    func twoThreads() async throws {
        let profile = try simulate.mixedProfile(seed: 5)
        let (code, captured, merged) = try await simulate.authload(["simulate", profile, "--threads", "2"], quiet: false)
        let (_, _, again) = try await simulate.authload(["simulate", profile, "--threads", "2"])
        let (_, _, oneThread) = try await simulate.authload(["simulate", profile])
        let (_, _, otherSeed) = try await simulate.authload(["simulate", try simulate.mixedProfile(seed: 6), "--threads", "2"])
        #expect(code == .success, "\(captured.err)")
        #expect(captured.out.contains("simulated as 2 shards on 2 threads"))
        #expect(captured.out.contains("merged 2 shards of mixed"))
        let a = try #require(merged)
        let b = try #require(again)
        let whole = try #require(oneThread)
        #expect(a.environment.simulated == true, "a merge of simulated shards is a simulation")
        #expect(a.environment.shard == nil && a.shards?.count == 2)
        #expect(try simulate.measured(a) == simulate.measured(b))
        #expect(try simulate.measured(a) != simulate.measured(try #require(otherSeed)))
        // The same users and schedule as one thread's simulation; only the services' draws differ (each shard has its own).
        for flow in ["login", "mfa", "gccs", "streem"] {
            let id = MetricID(flow: flow, step: nil)
            let threads = try #require(a.metrics.first { $0.id == id }).count
            let one = try #require(whole.metrics.first { $0.id == id }).count
            #expect(Double(threads) > Double(one) * 0.9 && Double(threads) < Double(one) * 1.1, "\(flow): \(threads) vs \(one)")
        }
    }

    @Test("The merged report is what `authload merge` makes of the shards' reports, rows the checkpoints saved included")
    func mergedAsMergeWould() async throws {
        // Checkpoints every 2 s of the 20 s: most rows are saved on the side and forgotten by the run before its end.
        let profile = try temporaryFile(
            "threads-checkpointed.json",
            String(contentsOfFile: try simulate.mixedProfile(seed: 8, users: 60), encoding: .utf8)
                .replacingOccurrences(of: #""timeouts": {"#, with: #""metrics": { "interval": "1s", "checkpoint": "2s" }, "timeouts": {"#))
        let directory = try scratchDirectory("threads-merge")
        let captured = Captured()
        #expect(
            await Authload.main(["simulate", profile, "--threads", "2", "--out", directory, "--quiet"], console: captured.console)
                == .success)
        let again = try scratchDirectory("threads-merge-again")
        let shards = ["shard-0", "shard-1"].map { (directory as NSString).appendingPathComponent($0) }
        #expect(
            await Authload.main(["merge"] + shards + ["--out", again, "--quiet"], console: captured.console) == .success, "\(captured.err)")
        let threads = try ReportWriter.load(resultJSON: (directory as NSString).appendingPathComponent("result.json"))
        let merge = try ReportWriter.load(resultJSON: (again as NSString).appendingPathComponent("result.json"))
        #expect(threads.timeseries.count >= 20, "a row a second")
        #expect(try simulate.measured(threads) == simulate.measured(merge))
        #expect(
            try Data(contentsOf: URL(fileURLWithPath: (directory as NSString).appendingPathComponent("summary.csv")))
                == Data(contentsOf: URL(fileURLWithPath: (again as NSString).appendingPathComponent("summary.csv"))))
    }

    @Test("--threads refuses a capacity model, --shard, live metrics and a real run, each saying why")
    func refusals() async throws {
        let config = try temporaryFile("threads-model.json", #"{"capacity": {"workers": 8, "queue": 100}}"#)
        let profile = try simulate.mixedProfile(seed: 7, users: 10, duration: "3s")
        let cases: [([String], String)] = [
            (["simulate", profile, "--threads", "2", "--config", config], "one set of workers"),
            (["simulate", profile, "--threads", "2", "--shard", "0/2"], "not both"),
            (["simulate", profile, "--threads", "2", "--metrics-listen", "127.0.0.1:0"], "--metrics-listen"),
            (["run", profile, "--threads", "2"], "needs --simulate"),
            (["simulate", profile, "--threads", "0"], "from 1 to 64")
        ]
        for (arguments, reason) in cases {
            let captured = Captured()
            #expect(await Authload.main(arguments, console: captured.console) == .usage, "\(arguments)")
            #expect(captured.err.contains(reason), "\(arguments): \(captured.err)")
        }
    }
}
