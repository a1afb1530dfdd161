import AuthloadCore
import Foundation
import Testing

@testable import AuthloadReport

@Suite("Time-series rows written straight into bytes")
struct RowJSONTests {
    /// Rows with every optional field present and absent, and start times whole, fractional and huge.
    static func rows() -> [IntervalRow] {
        var rows = Fixtures.run().timeseries
        #expect(rows.count(where: { !$0.metrics.isEmpty }) >= 3)
        rows[0].span = 12
        rows[0].startSeconds = 0
        rows[1].droppedArrivals = 0
        rows[1].maxScheduleLagMicros = 1_234_567
        rows[1].startSeconds = 12.5
        rows[2].metrics[0].histogram = Fixtures.histogram([1_000, 2_000, 90_000])
        rows[2].metrics[0].failedHistogram = Fixtures.histogram([2_000])
        rows[2].metrics[0].upperBound = true
        rows[2].metrics.append(Fixtures.metric("login", nil, count: 4))
        rows[2].metrics[1].upperBound = false
        rows[2].startSeconds = 0.1
        var more = rows[1]
        more.index = -3
        more.activeUsers = 1_000_000
        more.metrics[0].errors = 99
        more.metrics[0].maxMicros = Int.max
        for start in [86_400.0, 1e20, 123_456.789, 3e-7, 9_007_199_254_740_992] {
            more.startSeconds = start
            rows.append(more)
        }
        var named = rows[0]
        named.metrics[0].id = MetricID(flow: "naïve / flow <x>", step: "étape 1")
        rows.append(named)
        return rows
    }

    static func encoder(pretty: Bool) -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = pretty ? [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes] : [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }

    @Test("a row has the bytes JSONEncoder gives it, compact and pretty-printed", arguments: [false, true])
    func sameBytes(pretty: Bool) throws {
        // A row without series is left to JSONEncoder (below).
        for row in Self.rows() where !row.metrics.isEmpty {
            var bytes: [UInt8] = Array("x".utf8)
            #expect(RowJSON.append(row, pretty: pretty, depth: 0, to: &bytes))
            let expected = try Self.encoder(pretty: pretty).encode(row)
            #expect(String(decoding: bytes.dropFirst(), as: UTF8.self) == String(decoding: expected, as: UTF8.self))
            #expect(bytes.first == UInt8(ascii: "x"), "appended after what was there")
        }
    }

    @Test("deeper in, a pretty row's lines move two spaces a level, its first line left to the caller")
    func depth() throws {
        let row = Self.rows()[2]
        var bytes: [UInt8] = []
        #expect(RowJSON.append(row, pretty: true, depth: 2, to: &bytes))
        let expected = String(decoding: try Self.encoder(pretty: true).encode(row), as: UTF8.self)
            .split(separator: "\n", omittingEmptySubsequences: false).enumerated()
            .map { $0.offset == 0 ? String($0.element) : "    " + $0.element }.joined(separator: "\n")
        #expect(String(decoding: bytes, as: UTF8.self) == expected)
    }

    @Test("a row with a string to escape or no series is left to JSONEncoder, and nothing is appended")
    func leftToEncoder() {
        var quoted = Self.rows()[0]
        quoted.metrics[0].id = MetricID(flow: "say \"hi\"", step: nil)
        var backslash = Self.rows()[0]
        backslash.metrics[0].id = MetricID(flow: "a", step: "b\\c")
        var newline = Self.rows()[0]
        newline.metrics[0].histogram = "a\nb"
        var empty = Self.rows()[0]
        empty.metrics = []
        var infinite = Self.rows()[0]
        infinite.startSeconds = .infinity
        for row in [quoted, backslash, newline, empty, infinite] {
            var bytes: [UInt8] = [1, 2]
            #expect(!RowJSON.append(row, pretty: true, depth: 1, to: &bytes))
            #expect(!RowJSON.append(row, pretty: false, depth: 0, to: &bytes))
            #expect(bytes == [1, 2])
        }
    }

    @Test("rows the writer leaves to JSONEncoder still reach result.json and the checkpoint rows, and read back")
    func fallbackWritten() throws {
        let dir = ReportWriterTests.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var result = Fixtures.run()
        result.timeseries[1].metrics[0].id = MetricID(flow: "say \"hi\"", step: nil)
        result.timeseries[2].metrics = []
        result.status = .running
        #expect(try ReportWriter.writeCheckpoint(result, to: dir, firstNewInterval: 0) == result.timeseries.last!.end)
        let lines = try String(contentsOfFile: dir + "/checkpoint-timeseries.jsonl", encoding: .utf8).split(separator: "\n")
        let compact = Self.encoder(pretty: false)
        #expect(lines == (try result.timeseries.map { String(decoding: try compact.encode($0), as: UTF8.self)[...] }))
        #expect(try ReportWriter.load(resultJSON: dir + "/result.json").timeseries == result.timeseries)
        result.status = .completed
        try ReportWriter.writeResultJSON(result, to: dir + "/result.json")
        #expect(try Data(contentsOf: URL(fileURLWithPath: dir + "/result.json")) == (try ReportWriter.encode(result, path: dir)))
    }
}
