import AuthloadCLI
import AuthloadCore
import AuthloadStaging
import AuthloadTransport
import Foundation
import Testing

/// The built `authload` executable, next to the test bundle.
let authloadBinary: URL = {
    let beside = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("authload")
    if FileManager.default.isExecutableFile(atPath: beside.path) { return beside }
    return packageRoot.appendingPathComponent(".build/debug/authload")
}()

/// A running `authload` process whose output is collected as it comes.
final class RunningAuthload: Sendable {
    let process: Process
    /// Set when each pipe reached its end: everything the child wrote has been read.
    private let ended = (out: AsyncFlag(), err: AsyncFlag())
    private let output = Locked((out: "", err: ""))
    private let sawLine: Locked<[(@Sendable (String) -> Bool, AsyncFlag)]> = Locked([])
    private let exited = AsyncFlag()

    /// - Parameter environment: the child's environment; nil: this process's.
    init(_ arguments: [String], environment: [String: String]? = nil) throws {
        process = Process()
        process.executableURL = authloadBinary
        process.arguments = arguments
        if let environment { process.environment = environment }
        process.currentDirectoryURL = FileManager.default.temporaryDirectory
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        let exited = self.exited
        process.terminationHandler = { _ in exited.set() }
        let ended = self.ended
        try process.run()
        readToEnd(out.fileHandleForReading, ended: ended.out) { [output, sawLine] text in
            let all = output.withLock {
                $0.out += text
                return $0.out
            }
            for (seen, flag) in sawLine.withLock({ $0 }) where seen(all) { flag.set() }
        }
        readToEnd(err.fileHandleForReading, ended: ended.err) { [output] text in
            output.withLock { $0.err += text }
        }
    }

    var stdout: String { output.withLock { $0.out } }
    var stderr: String { output.withLock { $0.err } }

    /// Returns once standard output contains `needle`, or the process has exited.
    func waitFor(_ needle: String) async {
        await waitUntil { $0.contains(needle) }
    }

    /// Returns once standard output so far satisfies `seen`, or the process has exited.
    func waitUntil(_ seen: @escaping @Sendable (String) -> Bool) async {
        let flag = AsyncFlag()
        sawLine.withLock { $0.append((seen, flag)) }
        if seen(stdout) { flag.set() }
        await race({ await flag.wait() }, { await self.exited.wait() })
    }

    func waitForExit() async -> Int32 {
        await exited.wait()
        process.waitUntilExit()
        // The exit can be reported before the handlers saw the last bytes: wait until both pipes ended
        // (the suite's time limit bounds the wait).
        await ended.out.wait()
        await ended.err.wait()
        return process.terminationStatus
    }
}

@Suite("The authload binary", .serialized, .timeLimit(.minutes(2)))
struct BinaryTests {
    static let shortProfile = """
        {"name": "short", "target": {"embedded": {"fcsdk": {"latency": {"fixed": "2ms"}}}},
         "load": {"users": 20, "rampUp": "500ms", "duration": "2s", "thinkTime": "100ms"},
         "flows": [{"name": "login", "kind": "fcsdk-login"}]}
        """

    @Test("run writes every report file and prints the report path")
    func runWritesReport() async throws {
        let profile = try temporaryFile("short.json", Self.shortProfile)
        let out = (profile as NSString).deletingLastPathComponent + "/report"
        let run = try RunningAuthload(["run", profile, "--out", out, "--quiet"])
        let status = await run.waitForExit()
        #expect(status == 0, "stderr: \(run.stderr)")
        #expect(run.stdout == "report: \(out)/report.html\n")
        for file in ["report.html", "summary.csv", "timeseries.csv", "errors.csv", "result.json"] {
            #expect(FileManager.default.fileExists(atPath: "\(out)/\(file)"), "\(file)")
        }
        let summary = try String(contentsOfFile: "\(out)/summary.csv", encoding: .utf8)
        #expect(summary.contains("login,login,"))
        #expect(summary.contains("login,logout,"))
    }

    @Test("a bad profile exits 64 with one line on stderr")
    func badProfile() async throws {
        let profile = try temporaryFile(
            "bad.json",
            "{\"name\": \"bad\", \"target\": {\"embedded\": {}}, \"load\": {\"users\": -5, \"duration\": \"1s\"}, \"flows\": []}")
        let run = try RunningAuthload(["validate", profile])
        #expect(await run.waitForExit() == 64)
        #expect(run.stderr == "error: bad.json: load.users: must be greater than 0, found -5\n")
    }

    @Test("serve on a port that is taken exits 1 with one line, and its loops stop before the process ends")
    func serveOnTakenPort() async throws {
        let group = try EventLoopGroup(loops: 1)
        defer { group.shutdown() }
        let taken = try HTTPServer(group: group, port: 0, service: StagingServer(configuration: StagingConfiguration()))
        defer { taken.close() }
        // Before the fix about one exit in three crashed: the loops' threads outlived the group that failed to listen.
        for _ in 0..<10 {
            let serve = try RunningAuthload(["serve", "--port", "\(taken.port)"])
            #expect(await serve.waitForExit() == 1)
            let stderr = serve.stderr
            #expect(stderr.hasPrefix("error: cannot start the staging server: ") && stderr.contains("EADDRINUSE"), "\(stderr)")
            #expect(stderr.split(separator: "\n").count == 1, "\(stderr)")
        }
    }

    @Test("SIGINT stops the run, writes the partial report and exits 130")
    func interrupt() async throws {
        let profile = try temporaryFile(
            "long.json", Self.shortProfile.replacingOccurrences(of: "\"duration\": \"2s\"", with: "\"duration\": \"60s\""))
        let out = (profile as NSString).deletingLastPathComponent + "/report"
        let run = try RunningAuthload(["run", profile, "--out", out])
        await run.waitFor("authload 0.1.0: short")
        run.process.interrupt()
        let status = await run.waitForExit()
        #expect(status == 130, "stdout: \(run.stdout) stderr: \(run.stderr)")
        #expect(run.stdout.contains("stopping: no new flows"))
        let result = try String(contentsOfFile: "\(out)/result.json", encoding: .utf8)
        #expect(result.contains("\"status\" : \"interrupted\""))
    }

    @Test("a run killed with SIGKILL leaves checkpoints from which authload report rebuilds every saved interval")
    func killedRunRebuilds() async throws {
        let profile = try temporaryFile(
            "soak.json",
            """
            {"name": "soak", "target": {"embedded": {"fcsdk": {"latency": {"fixed": "1ms"}}}},
             "load": {"users": 10, "duration": "60s", "thinkTime": "50ms"},
             "flows": [{"name": "login", "kind": "fcsdk-login"}],
             "timeouts": {"step": "1s"}, "metrics": {"checkpoint": "1s"}}
            """)
        let out = (profile as NSString).deletingLastPathComponent + "/report"
        let run = try RunningAuthload(["run", profile, "--out", out])
        // Several checkpoints, the last of them with at least 3 final intervals.
        await run.waitUntil { $0.components(separatedBy: "checkpoint: ").count > 4 && Self.savedIntervals($0) >= 3 }
        kill(run.process.processIdentifier, SIGKILL)
        let status = await run.waitForExit()
        #expect(run.process.terminationReason == .uncaughtSignal && status == SIGKILL, "stdout: \(run.stdout) stderr: \(run.stderr)")
        let saved = Self.savedIntervals(run.stdout)
        #expect(saved >= 3)
        #expect(!FileManager.default.fileExists(atPath: "\(out)/report.html"), "the final report was never written")

        let captured = Captured()
        let code = await Authload.main(["report", out], console: captured.console)
        // The run never finished: interrupted, as its exit status, the header, junit.xml and the HTML all say.
        #expect(code == .interrupted, "\(captured.err)")
        #expect(captured.out.contains("note: rebuilt from a checkpoint"))
        let rebuilt = try String(contentsOfFile: "\(out)/result.json", encoding: .utf8)
        #expect(rebuilt.contains("\"status\" : \"interrupted\"") && rebuilt.contains("Rebuilt from the last checkpoint, saved at 20"))
        let junit = try String(contentsOfFile: "\(out)/junit.xml", encoding: .utf8)
        #expect(junit.contains("name=\"run interrupted\"") && !junit.contains("running"), "\(junit)")
        let timeseries = try String(contentsOfFile: "\(out)/timeseries.csv", encoding: .utf8)
        let intervals = Set(timeseries.split(whereSeparator: \.isNewline).dropFirst().compactMap { Int($0.prefix { $0 != "," }) })
        #expect(Set(0..<saved).isSubset(of: intervals), "every interval up to the last checkpoint: \(intervals.sorted())")
        let summary = try String(contentsOfFile: "\(out)/summary.csv", encoding: .utf8)
        #expect(summary.contains("login,login,"))
        let html = try String(contentsOfFile: "\(out)/report.html", encoding: .utf8)
        #expect(html.contains("status-interrupted\">interrupted</span>") && html.contains("Rebuilt from the last checkpoint, saved at"))
    }

    @Test("a run whose checkpoints let go of the rows they saved still reports every interval, once, in order")
    func checkpointedRunReportsEveryInterval() async throws {
        let profile = try temporaryFile(
            "checkpointed.json",
            """
            {"name": "checkpointed", "target": {"embedded": {"fcsdk": {"latency": {"fixed": "1ms"}}}},
             "load": {"users": 10, "duration": "5s", "thinkTime": "50ms"},
             "flows": [{"name": "login", "kind": "fcsdk-login"}],
             "timeouts": {"step": "1s"}, "metrics": {"checkpoint": "500ms"}}
            """)
        let out = (profile as NSString).deletingLastPathComponent + "/report"
        let run = try RunningAuthload(["run", profile, "--out", out])
        #expect(await run.waitForExit() == 0, "stderr: \(run.stderr)")
        #expect(Self.savedIntervals(run.stdout) >= 2, "checkpoints saved rows before the end: \(run.stdout)")
        #expect(!FileManager.default.fileExists(atPath: "\(out)/checkpoint-timeseries.jsonl"))

        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: "\(out)/result.json"))) as? [String: Any]
        let rows = try #require(json?["timeseries"] as? [[String: Any]])
        let indices = rows.compactMap { $0["index"] as? Int }
        #expect(indices.count >= 5)
        #expect(indices == Array(0..<indices.count), "every interval once, in order: \(indices)")
        let timeseries = try String(contentsOfFile: "\(out)/timeseries.csv", encoding: .utf8)
        let csvIntervals = timeseries.split(whereSeparator: \.isNewline).dropFirst().compactMap { Int($0.prefix { $0 != "," }) }
        #expect(csvIntervals == csvIntervals.sorted() && Set(csvIntervals) == Set(indices), "the CSV has the same intervals, in order")
    }

    /// The interval count of the last `checkpoint: N intervals saved` line, or 0.
    static func savedIntervals(_ stdout: String) -> Int {
        stdout.split(separator: "\n").last { $0.hasPrefix("checkpoint: ") }
            .flatMap { Int($0.dropFirst("checkpoint: ".count).prefix { $0.isNumber }) } ?? 0
    }
}
