import AuthloadCLI
import AuthloadCore
import AuthloadReport
import AuthloadStaging
import AuthloadTransport
import Foundation
import Testing

/// The staging server, remembering which usernames logged in how often, so a test can see that no two shards
/// ran the same user.
private final class UsernameLog: HTTPService {
    let staging: StagingServer
    private let logins = Locked<[String: Int]>([:])

    init(_ staging: StagingServer) { self.staging = staging }

    func respond(to request: HTTPRequest) -> ServiceReply {
        if request.method == "POST", let body = try? JSONValue.parse(request.body), let name = body["username"]?.stringValue {
            logins.withLock { $0[name, default: 0] += 1 }
        }
        return staging.respond(to: request)
    }

    var byUser: [String: Int] { logins.withLock { $0 } }
}

/// The acceptance of sharded runs: four `authload run --shard I/4` processes against one staging server on
/// loopback, then `authload merge` — the steps docs/sharding.md and deploy/kubernetes/README.md give.
@Suite("Sharded runs merged", .serialized, .timeLimit(.minutes(2)))
struct ShardMergeRunTests {
    struct Merged {
        var shards: [RunResult]
        var shardExits: [Int32]
        var merged: RunResult
        var mergeExit: Int32
        var mergeOutput: String
        var requestsServed: Int
        var logins: [String: Int]
        /// The directory holding `shard-0` … `shard-3` and `merged`.
        var reports: String
    }

    /// Runs `profile` (its target the server's URL) as four shard processes with a common start, then merges them.
    func runShards(_ profile: (String) -> String) async throws -> Merged {
        var configuration = StagingConfiguration()
        configuration.fcsdk.latency = .fixed(.milliseconds(2))
        let log = UsernameLog(StagingServer(configuration: configuration))
        let group = try EventLoopGroup(loops: 1)
        defer { group.shutdown() }
        let server = try HTTPServer(group: group, port: 0, service: log)
        defer { server.close() }
        let path = try temporaryFile("sharded.json", profile("http://127.0.0.1:\(server.port)"))
        let reports = (path as NSString).deletingLastPathComponent + "/reports"
        // Four children that end at the same instant (they share a start and a length), as a Kubernetes Job's pods
        // do; nothing here reads their output (--quiet). Spawned and waited for by pid (``SpawnedProcess``).
        let shards = try (0..<4).map { index in
            try SpawnedProcess(
                authloadBinary.path,
                ["run", path, "--shard", "\(index)/4", "--start-at", "+3s", "--out", "\(reports)/shard-\(index)", "--quiet"])
        }
        var exits: [Int32] = []
        for shard in shards { exits.append(await shard.exitStatus()) }
        let served = log.staging.accessLog.total
        let (mergeExit, mergeOut, mergeErr) = try await Self.authload(["merge", reports, "--out", "\(reports)/merged"], in: reports)
        #expect(mergeErr.isEmpty || mergeExit != 0, "\(mergeErr)")
        return Merged(
            shards: try (0..<4).map { try ReportWriter.load(resultJSON: "\(reports)/shard-\($0)/result.json") }, shardExits: exits,
            merged: try ReportWriter.load(resultJSON: "\(reports)/merged/result.json"), mergeExit: mergeExit,
            mergeOutput: mergeOut + mergeErr, requestsServed: served, logins: log.byUser, reports: reports)
    }

    /// Runs the binary to its end, its output in files beside `directory`.
    static func authload(_ arguments: [String], in directory: String) async throws -> (exit: Int32, stdout: String, stderr: String) {
        let out = directory + ".stdout"
        let err = directory + ".stderr"
        let status = try await SpawnedProcess(authloadBinary.path, arguments, stdout: out, stderr: err).exitStatus()
        let read = { (path: String) in (try? String(contentsOfFile: path, encoding: .utf8)) ?? "" }
        return (status, read(out), read(err))
    }

    static func flows(_ result: RunResult, _ id: String = "login") -> MetricSummary? {
        result.metrics.first { $0.id.description == id }
    }

    @Test(
        "closed model: counts equal the server's, histograms add exactly, every user runs on one shard, and a throughput no shard reaches alone passes merged"
    )
    func closedModel() async throws {
        let run = try await runShards { url in
            """
            {"name": "shards-closed", "target": {"baseURL": "\(url)"},
             "load": {"users": 12, "duration": "2s", "thinkTime": "100ms", "gracefulStop": "5s"},
             "users": {"username": "user{n}", "password": "demo-password"},
             "flows": [{"name": "login", "kind": "fcsdk-login"}],
             "thresholds": [{"metric": "login", "minThroughput": 60}, {"metric": "login.login", "percentile": 99, "max": "2s", "window": "1s"}]}
            """
        }
        #expect(run.shardExits == [2, 2, 2, 2], "no shard alone reaches 60 flows/s")
        for shard in run.shards { #expect(shard.thresholds[0].passed == false && shard.thresholds[1].passed) }
        #expect(run.mergeExit == 0, "\(run.mergeOutput)")
        #expect(run.merged.thresholds.map(\.passed) == [true, true])
        #expect(run.merged.httpRequests == run.requestsServed, "every request the server answered, and no other")
        #expect(run.merged.httpRequests == run.shards.map { $0.httpRequests ?? 0 }.reduce(0, +))
        for (position, summary) in run.merged.metrics.enumerated() {
            var all = Histogram()
            for shard in run.shards { all.merge(try Histogram(serialized: shard.metrics[position].histogram)) }
            #expect(try Histogram(serialized: summary.histogram) == all, "\(summary.id) bucket for bucket")
            #expect(summary.count == all.totalCount && summary.p99Micros == all.value(atPercentile: 99))
        }
        #expect(Set(run.logins.keys) == Set((0..<12).map { "user\($0)" }), "users 0…11, each on one shard: \(run.logins.keys.sorted())")
        #expect(run.merged.timeseries.map(\.activeUsers).max() == 12)
        #expect(run.merged.shards?.count == 4 && run.merged.environment.startLateSeconds ?? 99 < 1)
        #expect(run.mergeOutput.contains("report: \(run.reports)/merged/report.html"))
        let html = try String(contentsOfFile: "\(run.reports)/merged/report.html", encoding: .utf8)
        #expect(html.contains("<h2>Shards</h2>"))
    }

    @Test(
        "open model with stages: every arrival runs once on one shard, the capacity table adds up, and the merge refuses a shard of another run"
    )
    func openModelWithStages() async throws {
        let run = try await runShards { url in
            """
            {"name": "shards-open", "target": {"baseURL": "\(url)"},
             "load": {"model": "open", "stages": [{"duration": "1s", "target": 40}, {"duration": "1s", "target": 40}], "maxUsers": 100,
                      "gracefulStop": "5s"},
             "users": {"username": "user{n}", "password": "demo-password"},
             "flows": [{"name": "login", "kind": "fcsdk-login"}],
             "thresholds": [{"metric": "login", "percentile": 99, "max": "1ms", "samples": "all"}]}
            """
        }
        #expect(run.mergeExit == 2, "p99 ≤ 1ms fails on the merged data: \(run.mergeOutput)")
        #expect(run.merged.httpRequests == run.requestsServed)
        let flows = try #require(Self.flows(run.merged)).count
        #expect(flows == run.shards.map { Self.flows($0)?.count ?? 0 }.reduce(0, +))
        #expect(run.logins.count == flows && run.logins.values.allSatisfy { $0 == 1 }, "arrival k is one user, on one shard")
        let stages = try #require(run.merged.capacity?.stages)
        for (position, stage) in stages.enumerated() {
            #expect(stage.flows == run.shards.map { $0.capacity?.stages[position].flows ?? 0 }.reduce(0, +))
        }
        #expect(stages.map(\.flows).reduce(0, +) == flows)

        // A shard of another profile: one line naming the difference, exit 64.
        var stranger = run.shards[1]
        stranger.profileName = "another"
        let strangerDirectory = run.reports + "-stranger/shard-1"
        try ReportWriter.write(stranger, to: strangerDirectory)
        let refusal = try await Self.authload(["merge", run.reports + "/shard-0", strangerDirectory], in: run.reports + "-stranger")
        #expect(refusal.exit == 64)
        #expect(
            refusal.stderr
                == "error: \(strangerDirectory): profile \"another\" differs from \(run.reports)/shard-0's \"shards-open\": these are shards of different runs\n"
        )
    }
}
