import AuthloadCLI
import AuthloadCore
import AuthloadReport
import Foundation
import Testing

/// `authload run --shard I/N`, `--shard-from-env` and `--start-at` through the command line.
@Suite("Sharded runs on the command line", .serialized, .timeLimit(.minutes(1)))
struct ShardRunTests {
    static let profile = """
        {"name": "sharded", "target": {"embedded": {"fcsdk": {"latency": {"fixed": "5ms"}}}},
         "load": {"users": 8, "duration": "1s", "thinkTime": "100ms", "gracefulStop": "5s"},
         "flows": [{"name": "login", "kind": "fcsdk-login"}]}
        """

    @Test(
        "bad shard and start options are refused with one line that says what to write",
        arguments: [
            (["run", "x.json", "--shard", "4/4"], "error: --shard \"4/4\": expected I/N with 0 ≤ I < N, e.g. 0/4"),
            (["run", "x.json", "--shard", "two"], "error: --shard \"two\": expected I/N with 0 ≤ I < N, e.g. 0/4"),
            (
                ["run", "x.json", "--start-at", "tomorrow"],
                "error: --start-at \"tomorrow\": expected an RFC 3339 UTC time such as 2026-11-24T02:00:00Z, or an offset from now such as +30s"
            )
        ])
    func badOptions(arguments: [String], message: String) async {
        let captured = Captured()
        #expect(await Authload.main(arguments, console: captured.console) == .usage)
        #expect(captured.err.split(separator: "\n").first.map(String.init) == message)
    }

    @Test("--start-at takes RFC 3339 UTC times and offsets from now")
    func startTimes() throws {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        #expect(StartTime.parse("+30s", now: now) == now.addingTimeInterval(30))
        #expect(StartTime.parse("2027-01-15T08:00:00Z", now: .distantPast) == Date(timeIntervalSince1970: 1_800_000_000))
        #expect(StartTime.parse("2027-01-15T08:00:00.250Z", now: .distantPast)?.timeIntervalSince1970 == 1_800_000_000.25)
        #expect(StartTime.parse("2027-01-15T08:00:00+01:00", now: now) == nil, "UTC only")
        #expect(StartTime.parse("+soon", now: now) == nil)
    }

    @Test("two shards of one profile: each reports which it is, and together they run every user once")
    func twoShards() async throws {
        let path = try temporaryFile("sharded.json", Self.profile)
        let directory = (path as NSString).deletingLastPathComponent
        var flows = 0
        for index in 0..<2 {
            let captured = Captured()
            let out = directory + "/shard-\(index)"
            let code = await Authload.main(
                ["run", path, "--shard", "\(index)/2", "--start-at", "+1s", "--out", out],
                console: captured.console)
            #expect(code == .success, "\(captured.err)")
            #expect(captured.out.contains("waiting until"), "the progress line says it waits")
            #expect(captured.out.contains("shard \(index)/2"))
            let result = try ReportWriter.load(resultJSON: out + "/result.json")
            #expect(result.environment.shard == "\(index)/2")
            #expect((result.environment.startLateSeconds ?? 99) < 1)
            let html = try String(contentsOfFile: out + "/report.html", encoding: .utf8)
            #expect(html.contains("\(index)/2 of a sharded run"))
            flows += result.metrics.first { $0.id == MetricID(flow: "login", step: nil) }?.count ?? 0
        }
        #expect(flows > 8, "8 users over two shards, each several iterations")
    }

    @Test("--shard-from-env without JOB_COMPLETION_INDEX says what is missing")
    func shardFromEnvironment() async throws {
        let path = try temporaryFile("sharded.json", Self.profile)
        let captured = Captured()
        #expect(await Authload.main(["run", path, "--shard-from-env"], console: captured.console) == .usage)
        #expect(captured.err.contains("JOB_COMPLETION_INDEX is not set"))
    }
}
