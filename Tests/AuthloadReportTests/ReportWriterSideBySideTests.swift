import AuthloadCore
import Foundation
import Testing

@testable import AuthloadReport

@Suite("Report files written side by side")
struct ReportWriterSideBySideTests {
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
