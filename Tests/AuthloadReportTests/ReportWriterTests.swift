import AuthloadCore
import Foundation
import Testing

@testable import AuthloadReport

@Suite("Report directory")
struct ReportWriterTests {
    /// A fresh directory per test, so tests can run in parallel.
    static func scratch() -> String {
        let dir = FileManager.default.temporaryDirectory
            .appendingPathComponent("authload-report-tests-\(UUID().uuidString)").path
        return dir
    }

    static func listing(_ dir: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: dir).sorted()
    }

    @Test("checkpoints append only the new intervals, keep result.json free of the time series, and load puts the rows back")
    func checkpoints() throws {
        let dir = Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let full = Fixtures.run()
        var early = full
        early.timeseries = Array(full.timeseries.prefix(2))
        early.status = .running
        #expect(try ReportWriter.writeCheckpoint(early, to: dir, firstNewInterval: 0) == 2)
        #expect(try Self.listing(dir) == ["checkpoint-timeseries.jsonl", "result.json", "timeseries.csv"])
        let firstSize = try Self.size(dir + "/result.json")
        // The next checkpoint is handed only the rows not yet saved, as the run's collector gives them.
        var later = full
        later.status = .running
        later.timeseries = Array(full.timeseries.dropFirst(2))
        #expect(try ReportWriter.writeCheckpoint(later, to: dir, firstNewInterval: 2) == full.timeseries.count)
        #expect(try String(contentsOfFile: dir + "/timeseries.csv", encoding: .utf8) == CSVWriter.timeseries(full))
        // result.json does not grow with the time series: its size is that of the cumulative figures alone.
        #expect(try Self.size(dir + "/result.json") == firstSize)
        var expected = full
        expected.status = .running
        #expect(try ReportWriter.load(resultJSON: dir + "/result.json") == expected)
        // Rebuilding (`authload report`) writes the rows into result.json and drops the side file.
        try ReportWriter.write(try ReportWriter.load(resultJSON: dir + "/result.json"), to: dir)
        #expect(!(try Self.listing(dir)).contains("checkpoint-timeseries.jsonl"))
        #expect(try ReportWriter.load(resultJSON: dir + "/result.json") == expected)
    }

    @Test("result.json written row by row is byte for byte the whole result encoded at once")
    func streamedRowsMatchWholeEncoding() throws {
        let dir = Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        for run in [Fixtures.run(), Fixtures.mixed()] {
            #expect(!run.timeseries.isEmpty)
            try ReportWriter.write(run, to: dir)
            let written = try Data(contentsOf: URL(fileURLWithPath: dir + "/result.json"))
            #expect(written == (try ReportWriter.encode(run, path: dir)))
        }
    }

    @Test("a row cut short by a crash mid-append is left out, rows appended twice come back once, a damaged row is named by its line")
    func tornCheckpointRow() throws {
        let dir = Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var run = Fixtures.run()
        run.status = .running
        _ = try ReportWriter.writeCheckpoint(run, to: dir, firstNewInterval: 0)
        let rowsFile = dir + "/checkpoint-timeseries.jsonl"
        let whole = try Data(contentsOf: URL(fileURLWithPath: rowsFile))
        try (whole + Data(#"{"activeUsers":3,"ind"#.utf8)).write(to: URL(fileURLWithPath: rowsFile))
        #expect(try ReportWriter.load(resultJSON: dir + "/result.json").timeseries == run.timeseries)
        // Rows appended twice (a checkpoint that failed after appending them is retried) come back once.
        try (whole + whole).write(to: URL(fileURLWithPath: rowsFile))
        #expect(try ReportWriter.load(resultJSON: dir + "/result.json").timeseries == run.timeseries)

        try (Data("{}\n".utf8) + whole).write(to: URL(fileURLWithPath: rowsFile))
        let error = try #require(throws: ReportError.self) { try ReportWriter.load(resultJSON: dir + "/result.json") }
        #expect(error.path == rowsFile)
        #expect(error.message == #"line 1: not a time-series row: missing field "index""#, "\(error)")
    }

    static func size(_ path: String) throws -> Int {
        try (FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.intValue ?? -1
    }

    @Test("the final report keeps the rows checkpoints wrote and appends the rest; a merged row's rate covers its span")
    func finalWriteKeepsCheckpointedRows() throws {
        let dir = Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var full = Fixtures.run()
        full.status = .running
        let next = try ReportWriter.writeCheckpoint(full, to: dir, firstNewInterval: 0)
        #expect(next == full.timeseries.last!.index + 1)
        let checkpointed = try String(contentsOfFile: dir + "/timeseries.csv", encoding: .utf8)
        // In memory the first two rows were merged since; the file keeps both.
        var final = Fixtures.run()
        final.timeseries.replaceSubrange(0...1, with: [final.timeseries[0].merged(with: final.timeseries[1])])
        let later = Fixtures.interval(next, users: 3, [Fixtures.metric("login", "submit", count: 8)])
        final.timeseries.append(later)
        try ReportWriter.write(final, to: dir, checkpointed: next)
        let text = try String(contentsOfFile: dir + "/timeseries.csv", encoding: .utf8)
        #expect(text.hasPrefix(checkpointed))
        #expect(text.dropFirst(checkpointed.count) == CSVWriter.timeseries(final, from: next, header: false))
        // A merged row's rate is over all of its intervals.
        var spanned = Fixtures.run()
        spanned.intervalSeconds = 1
        var row = IntervalRow(index: 0, startSeconds: 0, activeUsers: 5, metrics: [Fixtures.metric("login", "submit", count: 40)])
        row.span = 4
        spanned.timeseries = [row]
        #expect(CSVWriter.timeseries(spanned).contains("0,0.000,5,login,submit,40,0,10.000,"))
    }

    @Test("the final report reads the rows the checkpoints saved back from disk and puts the rows still in memory after them")
    func finalWriteReadsSavedRows() throws {
        let dir = Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let full = Fixtures.run()
        var early = full
        early.status = .running
        early.timeseries = Array(full.timeseries.prefix(2))
        let next = try ReportWriter.writeCheckpoint(early, to: dir, firstNewInterval: 0)
        // The run let go of the rows once saved: its final result holds only the rest.
        var final = full
        final.timeseries = Array(full.timeseries.dropFirst(2))
        try ReportWriter.write(final, to: dir, checkpointed: next)
        #expect(try ReportWriter.load(resultJSON: dir + "/result.json") == full)
        #expect(try String(contentsOfFile: dir + "/timeseries.csv", encoding: .utf8) == CSVWriter.timeseries(full))
        #expect(!(try Self.listing(dir)).contains("checkpoint-timeseries.jsonl"))
    }

    @Test("past two hours of saved rows, the final report merges the oldest as it reads them; the CSV keeps every interval")
    func finalWriteBoundsLongRuns() throws {
        let dir = Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let rows = (0..<(TimeSeries.defaultMaxRows + 300)).map {
            Fixtures.interval($0, users: 1, [Fixtures.metric("login", "authenticate", count: 2, p50: 1_000 + $0)])
        }
        var saved = Fixtures.run(status: .running)
        saved.timeseries = Array(rows.dropLast(5))
        let next = try ReportWriter.writeCheckpoint(saved, to: dir, firstNewInterval: 0)
        var final = Fixtures.run()
        final.timeseries = Array(rows.suffix(5))
        try ReportWriter.write(final, to: dir, checkpointed: next)
        let written = try ReportWriter.load(resultJSON: dir + "/result.json").timeseries
        #expect(written.count <= TimeSeries.defaultMaxRows)
        #expect(written.reduce(0) { $0 + $1.intervals } == rows.count, "every interval is covered once")
        #expect(written.flatMap(\.metrics).reduce(0) { $0 + $1.count } == 2 * rows.count, "no sample is lost")
        #expect(zip(written, written.dropFirst()).allSatisfy { $0.index + $0.intervals == $1.index })
        let recent = written.suffix(1_000)
        #expect(recent.allSatisfy { $0 == rows[$0.index] }, "the recent past at full resolution")
        #expect(recent.last?.index == rows.count - 1)
        let csv = try String(contentsOfFile: dir + "/timeseries.csv", encoding: .utf8)
        #expect(csv.split(whereSeparator: \.isNewline).count == rows.count + 1, "one line per interval and the header")
    }

    @Test("a killed run past two hours is rebuilt in bounded memory, and the rebuild keeps the run's own timeseries.csv")
    func killedLongRunRebuilds() throws {
        let dir = Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let rows = (0..<(TimeSeries.defaultMaxRows + 300)).map {
            Fixtures.interval($0, users: 1, [Fixtures.metric("login", "authenticate", count: 2, p50: 1_000 + $0)])
        }
        var saved = Fixtures.run(status: .running)
        saved.timeseries = rows
        _ = try ReportWriter.writeCheckpoint(saved, to: dir, firstNewInterval: 0)
        let csvBefore = try String(contentsOfFile: dir + "/timeseries.csv", encoding: .utf8)
        // Killed here: load (what `authload report DIR` does) must not hold every saved row.
        let loaded = try ReportWriter.load(resultJSON: dir + "/result.json")
        #expect(loaded.timeseries.count <= TimeSeries.defaultMaxRows)
        #expect(loaded.timeseries.reduce(0) { $0 + $1.intervals } == rows.count, "every interval is covered once")
        try ReportWriter.write(loaded, to: dir, keepingTimeseriesCSV: true)
        #expect(
            try String(contentsOfFile: dir + "/timeseries.csv", encoding: .utf8) == csvBefore,
            "timeseries.csv keeps one row per interval rather than the merged rows")
        #expect(csvBefore.contains(",upper bound") == false)
    }

    @Test("writes the six files into a new directory and lists their paths")
    func writesFiles() throws {
        let dir = Self.scratch() + "/nested/report"
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let files = try ReportWriter.write(Fixtures.run(), to: dir)
        #expect(try Self.listing(dir) == ["errors.csv", "junit.xml", "report.html", "result.json", "summary.csv", "timeseries.csv"])
        #expect(files.html == dir + "/report.html")
        #expect(files.resultJSON == dir + "/result.json")
        #expect(Set(files.all.map { ($0 as NSString).lastPathComponent }).count == 6)
        for path in files.all {
            #expect(FileManager.default.fileExists(atPath: path))
        }
    }

    @Test("result.json is pretty, has sorted keys and reads back to an equal RunResult")
    func roundTrip() throws {
        let dir = Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var result = Fixtures.run(name: "naïve / \"quoted\" <name>")
        // Awkward doubles: these lose their last bit under a sloppy encoder.
        result.durationSeconds = 0.1 + 0.2
        result.metrics[0].meanMicros = 1.0 / 3.0
        result.timeseries[2].startSeconds = 4.000000000000001
        let files = try ReportWriter.write(result, to: dir)
        #expect(try ReportWriter.load(resultJSON: files.resultJSON) == result)
        let text = try String(contentsOfFile: files.resultJSON, encoding: .utf8)
        #expect(text.hasPrefix("{\n"))
        let keys = [
            "durationSeconds", "endedAt", "environment", "errors", "intervalSeconds", "metrics", "notes",
            "profileName", "schemaVersion", "startedAt", "status", "timeseries"
        ]
        let positions = try keys.map { try #require(text.range(of: "\n  \"\($0)\" :")?.lowerBound) }
        #expect(positions == positions.sorted())
    }

    @Test("result.json written a row at a time has the bytes JSONEncoder gives the whole result, with and without rows")
    func rowsStreamed() throws {
        let dir = Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var result = Fixtures.run(name: "naïve / \"quoted\" <name>")
        result.timeseries[1].metrics[0].histogram = Fixtures.histogram([1_000, 2_000])
        result.metrics[0].meanMicros = .nan
        var empty = result
        empty.timeseries = []
        for run in [result, empty] {
            let path = dir + "/result-\(run.timeseries.count).json"
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
            try ReportWriter.writeResultJSON(run, to: path)
            let written = try Data(contentsOf: URL(fileURLWithPath: path))
            #expect(written == (try ReportWriter.encode(run, path: path)))
        }
        #expect(try Self.listing(dir) == ["result-0.json", "result-\(result.timeseries.count).json"])
    }

    @Test("rows are read by authload's own parser, to the same rows JSONDecoder reads, every optional field included")
    func rowsReadApart() throws {
        let dir = Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var result = Fixtures.run()
        result.timeseries[0].span = 2
        result.timeseries[1].droppedArrivals = 3
        result.timeseries[1].maxScheduleLagMicros = 1_234
        result.timeseries[2].metrics[0].histogram = Fixtures.histogram([1_000, 2_000])
        result.timeseries[2].metrics[0].failedHistogram = Fixtures.histogram([2_000])
        result.timeseries[2].metrics[0].upperBound = true
        result.timeseries[2].metrics.append(Fixtures.metric("login", nil, count: 4))
        let files = try ReportWriter.write(result, to: dir)
        let data = try Data(contentsOf: URL(fileURLWithPath: files.resultJSON))
        let decoder = JSONDecoder()
        let apart = try #require(ReportWriter.decodeRowsApart(JSONValue.parse(data), decoder: decoder), "the fast path reads it")
        #expect(apart == result)
        #expect(apart.timeseries == (try decoder.decode(RunResult.self, from: data)).timeseries)
        // A row it cannot read goes to JSONDecoder, which names the field.
        let text = try String(contentsOfFile: files.resultJSON, encoding: .utf8)
        try text.replacingOccurrences(of: "\"activeUsers\" : 10", with: "\"activeUsers\" : \"ten\"").write(
            toFile: files.resultJSON, atomically: false, encoding: .utf8)
        let error = try #require(throws: ReportError.self) { try ReportWriter.load(resultJSON: files.resultJSON) }
        #expect(error.message.hasPrefix("field \"timeseries[1].activeUsers\": expected Int"), "\(error)")
    }

    @Test("atomic writes leave no temporary files behind, also when replacing an earlier report")
    func noTemporaryFiles() throws {
        let dir = Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try ReportWriter.write(Fixtures.run(), to: dir)
        try ReportWriter.write(Fixtures.run(name: "second"), to: dir)
        let names = try Self.listing(dir)
        #expect(names == ["errors.csv", "junit.xml", "report.html", "result.json", "summary.csv", "timeseries.csv"])
        #expect(try ReportWriter.load(resultJSON: dir + "/result.json").profileName == "second")
    }

    @Test("a file that cannot be replaced fails with its path and leaves no temporary file")
    func failedWriteCleansUp() throws {
        let dir = Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // A directory where report.html should go makes the final rename fail.
        try FileManager.default.createDirectory(atPath: dir + "/report.html/inner", withIntermediateDirectories: true)
        let error = try #require(throws: ReportError.self) { try ReportWriter.write(Fixtures.run(), to: dir) }
        #expect(error.path == dir + "/report.html")
        #expect(error.description.hasPrefix(dir + "/report.html: cannot write: "))
        #expect(try Self.listing(dir).allSatisfy { !$0.hasPrefix(".") })
    }

    @Test("loading a missing file names the file and says it is missing")
    func loadMissing() throws {
        let path = Self.scratch() + "/result.json"
        let error = try #require(throws: ReportError.self) { try ReportWriter.load(resultJSON: path) }
        #expect(error.description == "\(path): cannot read: no such file")
    }

    @Test(
        "loading a damaged result.json names the file and the problem",
        arguments: [
            ("not json at all", "not valid JSON: "),
            ("{\"schemaVersion\": 1}", "missing field \""),
            ("{\"schemaVersion\": 2}", "schemaVersion 2 is not supported (this authload reads 1)")
        ])
    func loadDamaged(content: String, expected: String) throws {
        let dir = Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let path = dir + "/result.json"
        try content.write(toFile: path, atomically: false, encoding: .utf8)
        let error = try #require(throws: ReportError.self) { try ReportWriter.load(resultJSON: path) }
        #expect(error.path == path)
        #expect(error.message.hasPrefix(expected), "\(error)")
    }

    @Test("a syntax error is located by line")
    func syntaxErrorLine() throws {
        let dir = Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let path = dir + "/result.json"
        try "{\n  \"schemaVersion\": 1,\n  \"status\": tru\n}\n".write(toFile: path, atomically: false, encoding: .utf8)
        let error = try #require(throws: ReportError.self) { try ReportWriter.load(resultJSON: path) }
        #expect(error.message.hasPrefix("not valid JSON: "))
        #expect(error.message.contains("line 3"), "\(error)")
    }

    @Test("a missing or mistyped field is named by its path in the document")
    func fieldPaths() throws {
        let dir = Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let files = try ReportWriter.write(Fixtures.run(), to: dir)
        let original = try String(contentsOfFile: files.resultJSON, encoding: .utf8)

        let mistyped = original.replacingOccurrences(of: "\"count\" : 100,", with: "\"count\" : \"many\",")
        try mistyped.write(toFile: files.resultJSON, atomically: false, encoding: .utf8)
        let typeError = try #require(throws: ReportError.self) { try ReportWriter.load(resultJSON: files.resultJSON) }
        #expect(typeError.message.hasPrefix("field \"metrics[0].count\": expected Int"), "\(typeError)")

        let missing = original.replacingOccurrences(of: "\"cores\" : 2,", with: "")
        try missing.write(toFile: files.resultJSON, atomically: false, encoding: .utf8)
        let keyError = try #require(throws: ReportError.self) { try ReportWriter.load(resultJSON: files.resultJSON) }
        #expect(keyError.message == "missing field \"environment.cores\"")
    }
}
