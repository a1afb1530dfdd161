import AuthloadCore
import Foundation
import Testing

@testable import AuthloadReport

@Suite("CSV files")
struct CSVWriterTests {
    let run = Fixtures.run()

    @Test("summary.csv has the documented header and one row per flow and step, latencies in ms")
    func summaryRows() {
        let lines = CSVWriterTests.lines(CSVWriter.summary(run))
        #expect(
            lines.first
                == "flow,step,count,errors,error_rate,rps,min_ms,mean_ms,p50_ms,p90_ms,p95_ms,p99_ms,p99_9_ms,max_ms,kind,http_requests,ok_count,ok_p50_ms,ok_p95_ms,ok_p99_ms,failed_p50_ms,failed_p99_ms"
        )
        #expect(lines.count == 1 + run.metrics.count)
        #expect(
            lines[1]
                == "login,,100,3,0.030000,10.000,1.000,1.500,1.234,2.000,2.005,3.000,3.999,4.000,flow,200,97,0.490,0.930,0.970,2.501,3.000")
        #expect(lines[3] == "login,logout,97,1,0.010309,9.700,0.300,0.450,0.534,0.600,0.605,0.900,1.899,1.200,step,,,,,,,")
        #expect(lines[5].hasPrefix("mfa,verify,40,0,0.000000,4.000,1.900,"))
    }

    @Test("a merged row of a long run says how many intervals it covers and that its percentiles are upper bounds")
    func mergedRowsMarked() throws {
        var result = run
        result.timeseries = [result.timeseries[0].merged(with: result.timeseries[1])]
        let lines = CSVWriterTests.lines(CSVWriter.timeseries(result))
        #expect(lines.dropFirst().allSatisfy { $0.hasSuffix(",2,upper bound") }, "\(lines)")
        let note = try #require(HTMLReport.mergedRowsNote(result))
        #expect(note.contains("upper bound"))
        #expect(HTMLReport.render(result).contains("an upper bound"))
        #expect(HTMLReport.mergedRowsNote(run) == nil)
    }

    @Test("timeseries.csv has a row per interval and series, and one row for an interval without samples")
    func timeseriesRows() throws {
        let lines = CSVWriterTests.lines(CSVWriter.timeseries(run))
        #expect(lines.first == "interval,start_s,active_users,flow,step,count,errors,rps,p50_ms,p90_ms,p99_ms,max_ms,intervals,percentiles")
        let rowsPerInterval = run.timeseries.map { max(1, $0.metrics.count) }.reduce(0, +)
        #expect(lines.count == 1 + rowsPerInterval)
        #expect(lines[1] == "0,0.000,5,login,,20,0,10.000,1.500,3.000,4.500,6.000,1,exact")
        #expect(lines.contains("3,6.000,8,,,0,0,0.000,,,,,1,exact"))
        // A series with zero samples has no latency to report, which is not the same as 0 ms.
        #expect(lines.contains("4,8.000,0,login,logout,0,0,0.000,,,,,1,exact"))
        let users = Set(lines.dropFirst().map { $0.split(separator: ",", omittingEmptySubsequences: false)[0] })
        #expect(users == ["0", "1", "2", "3", "4"])
    }

    @Test("errors.csv lists each series, kind and detail with its count")
    func errorRows() {
        let lines = CSVWriterTests.lines(CSVWriter.errors(run))
        #expect(
            lines == [
                "flow,step,kind,detail,count",
                "login,authenticate,http-error,503,2",
                #"login,logout,protocol-error,"missing ""sessionid"", rtCode=7",1"#
            ])
    }

    @Test("a detail with a comma and a quote survives an RFC 4180 parser unchanged")
    func quotedDetailRoundTrips() throws {
        let rows = CSVWriterTests.parse(CSVWriter.errors(run))
        let row = try #require(rows.last)
        #expect(row == ["login", "logout", "protocol-error", Fixtures.tricky, "1"])
        #expect(rows.allSatisfy { $0.count == CSVWriter.errorsHeader.count })
    }

    @Test(
        "fields are quoted only when RFC 4180 requires it",
        arguments: [
            ("plain", "plain"), ("", ""), ("a,b", "\"a,b\""), ("say \"hi\"", "\"say \"\"hi\"\"\""),
            ("two\nlines", "\"two\nlines\""), ("cr\r", "\"cr\r\""), ("naïve ü", "naïve ü")
        ])
    func quoting(raw: String, expected: String) {
        #expect(CSVWriter.field(raw) == expected)
    }

    @Test("every row of every file has as many fields as its header", arguments: Fixtures.Edge.allCases)
    func rectangular(edge: Fixtures.Edge) {
        let result = edge.result
        for (text, header) in [
            (CSVWriter.summary(result), CSVWriter.summaryHeader),
            (CSVWriter.timeseries(result), CSVWriter.timeseriesHeader),
            (CSVWriter.errors(result), CSVWriter.errorsHeader)
        ] {
            let rows = CSVWriterTests.parse(text)
            #expect(rows.first == header)
            #expect(rows.allSatisfy { $0.count == header.count })
            #expect(!text.lowercased().contains("nan") && !text.lowercased().contains("inf"))
        }
    }

    @Test("rates over zero seconds are empty cells, not infinity")
    func zeroDuration() {
        let lines = CSVWriterTests.lines(CSVWriter.summary(Fixtures.Edge.zeroDuration.result))
        #expect(
            lines[1] == "login,,100,3,0.030000,,1.000,1.500,1.234,2.000,2.005,3.000,3.999,4.000,flow,200,97,0.490,0.930,0.970,2.501,3.000")
    }

    // MARK: Helpers

    /// Splits on CRLF, the RFC 4180 record separator, dropping the final empty line.
    static func lines(_ text: String) -> [String] {
        #expect(text.hasSuffix("\r\n"))
        return text.components(separatedBy: "\r\n").dropLast().map { $0 }
    }

    /// A small RFC 4180 reader, independent of the writer, to prove the files parse back.
    static func parse(_ text: String) -> [[String]] {
        var rows: [[String]] = []
        var row: [String] = []
        var field = ""
        var quoted = false
        let chars = Array(text)
        var i = 0
        while i < chars.count {
            let c = chars[i]
            if quoted {
                if c == "\"", i + 1 < chars.count, chars[i + 1] == "\"" {
                    field.append("\"")
                    i += 1
                } else if c == "\"" {
                    quoted = false
                } else {
                    field.append(c)
                }
            } else if c == "\"" {
                quoted = true
            } else if c == "," {
                row.append(field)
                field = ""
            } else if c == "\r\n" {
                row.append(field)
                rows.append(row)
                row = []
                field = ""
            } else {
                field.append(c)
            }
            i += 1
        }
        return rows
    }
}
