import AuthloadCore
import Foundation
import Testing

@testable import AuthloadReport

@Suite("Final report from rows the run kept while saving them")
struct ReportWriterSavedRowsTests {
    @Test("rows the checkpoints saved, given as the run kept them, make the report reading them back from disk makes, without the disk")
    func savedRowsFromMemory() throws {
        let fromDisk = ReportWriterTests.scratch()
        let fromMemory = ReportWriterTests.scratch()
        defer {
            try? FileManager.default.removeItem(atPath: fromDisk)
            try? FileManager.default.removeItem(atPath: fromMemory)
        }
        let full = Fixtures.run()
        var early = full
        early.status = .running
        early.timeseries = Array(full.timeseries.prefix(2))
        var final = full
        final.timeseries = Array(full.timeseries.dropFirst(2))
        let next = try ReportWriter.writeCheckpoint(early, to: fromDisk, firstNewInterval: 0)
        let read = try ReportWriter.written(final, to: fromDisk, checkpointed: next)
        #expect(try ReportWriter.writeCheckpoint(early, to: fromMemory, firstNewInterval: 0) == next)
        // Gone from the disk: only the rows given can fill the report.
        try FileManager.default.removeItem(atPath: fromMemory + "/checkpoint-timeseries.jsonl")
        var saved = TimeSeries()
        saved.append(contentsOf: early.timeseries)
        let kept = try ReportWriter.written(final, to: fromMemory, checkpointed: next, saved: saved)
        #expect(kept.result == read.result)
        #expect(kept.result.timeseries == full.timeseries)
        for (disk, memory) in zip(read.files.all, kept.files.all) {
            #expect(try Data(contentsOf: URL(fileURLWithPath: disk)) == Data(contentsOf: URL(fileURLWithPath: memory)), "\(memory)")
        }
    }

    @Test("files written one after another are the files written side by side")
    func oneAfterAnother() throws {
        let dir = ReportWriterTests.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var run = Fixtures.mixed()
        run.timeseries[1].metrics[0].upperBound = true
        let together = try ReportWriter.written(run, to: dir + "/a").files
        let apart = try ReportWriter.written(run, to: dir + "/b", sideBySide: false).files
        for (one, other) in zip(together.all, apart.all) {
            #expect(try Data(contentsOf: URL(fileURLWithPath: one)) == Data(contentsOf: URL(fileURLWithPath: other)), "\(other)")
        }
        #expect(try ReportWriterTests.listing(dir + "/a") == ReportWriterTests.listing(dir + "/b"))
    }

    @Test("files written side by side: every one is written, and the error of the first that failed is thrown")
    func inParallel() throws {
        struct Failed: Error, Equatable { var number: Int }
        let ran = Locked(Set<Int>())
        let bodies: [@Sendable () throws -> Void] = (0..<5).map { number in
            {
                ran.withLock { _ = $0.insert(number) }
                if number == 1 || number == 3 { throw Failed(number: number) }
            }
        }
        #expect(throws: Failed(number: 1)) { try ReportWriter.inParallel(bodies) }
        #expect(ran.withLock { $0 } == [0, 1, 2, 3, 4])
        try ReportWriter.inParallel(Array(bodies.prefix(1)))
    }

    @Test("a report whose files are written side by side names the file that could not be written")
    func unwritableFileNamed() throws {
        let dir = ReportWriterTests.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // A directory where report.html goes: its rename fails while every other file is written.
        try FileManager.default.createDirectory(atPath: dir + "/report.html/x", withIntermediateDirectories: true)
        let error = try #require(throws: ReportError.self) { try ReportWriter.write(Fixtures.run(), to: dir) }
        #expect("\(error)".contains("report.html"), "\(error)")
        #expect(FileManager.default.fileExists(atPath: dir + "/result.json"))
        #expect(FileManager.default.fileExists(atPath: dir + "/timeseries.csv"))
        #expect(FileManager.default.fileExists(atPath: dir + "/junit.xml"))
    }
}

@Suite("Rows a run keeps while saving them")
struct KeptSavedRowsTests {
    @Test("past two hours, rows kept checkpoint by checkpoint merge where the rows read back from the file merge")
    func keptAsReadBack() throws {
        let dir = ReportWriterTests.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var run = Fixtures.run()
        run.status = .running
        let rows = (0..<(TimeSeries.defaultMaxRows + 1_300)).map { index in
            Fixtures.interval(index, users: index % 7, [Fixtures.metric("login", "submit", count: index % 13)])
        }
        var kept = TimeSeries()
        var batched = TimeSeries()
        var next = 0
        for start in stride(from: 0, to: rows.count, by: 60) {
            // What the run holds at a checkpoint: the rows not yet saved, and one saved already.
            run.timeseries = Array(rows[max(0, start - 1)..<min(start + 60, rows.count)])
            let firstNew = next
            next = try ReportWriter.writeCheckpoint(run, to: dir, firstNewInterval: firstNew)
            ReportWriter.keep(saved: run.timeseries, from: firstNew, in: &kept)
            batched.append(contentsOf: run.timeseries.filter { $0.index >= firstNew })
        }
        let readBack = try ReportWriter.savedSeries(in: dir + "/checkpoint-timeseries.jsonl")
        #expect(readBack.rows.count < rows.count, "merged past two hours")
        #expect(kept.rows == readBack.rows)
        // Why a row at a time: a checkpoint's rows appended at once are compacted at other moments.
        #expect(batched.rows != readBack.rows)
    }
}
