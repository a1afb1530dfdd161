import AuthloadCore
import Foundation

/// Time-series rows written straight into bytes, as `JSONEncoder` with sorted keys and unescaped slashes writes
/// them: pretty-printed at a given depth (`result.json`) or compact (the checkpoint rows file).
///
/// A simulated day writes each shard's rows twice (checkpoint lines, then `result.json`) and the merged report's
/// once more; `JSONEncoder` building a container tree per row was most of that. A row this writer does not
/// cover byte for byte (a string needing an escape, a number that is not finite, a row without series) is left
/// to `JSONEncoder`: ``append(_:pretty:depth:to:)`` returns false and writes nothing.
enum RowJSON {
    /// Appends `row` to `output`: pretty-printed with its braces `depth` levels of two spaces in (its first
    /// line's indent is the caller's), or compact when `pretty` is false.
    ///
    /// - Returns: false, having appended nothing, when `JSONEncoder` must write this row.
    static func append(_ row: IntervalRow, pretty: Bool, depth: Int, to output: inout [UInt8]) -> Bool {
        guard covers(row) else { return false }
        // Swapped in and out, so the bytes are appended to in place, never copied.
        var writer = Writer(output: [], pretty: pretty)
        swap(&writer.output, &output)
        writer.row(row, depth: depth)
        swap(&writer.output, &output)
        return true
    }

    /// True when every string of `row` is written as is and every number is finite, and it has series.
    private static func covers(_ row: IntervalRow) -> Bool {
        guard !row.metrics.isEmpty, row.startSeconds.isFinite else { return false }
        for metric in row.metrics {
            guard plain(metric.id.flow), metric.id.step.map(plain) ?? true, metric.histogram.map(plain) ?? true,
                metric.failedHistogram.map(plain) ?? true
            else { return false }
        }
        return true
    }

    /// A string JSON holds without an escape (slashes unescaped).
    private static func plain(_ text: String) -> Bool {
        text.utf8.allSatisfy { $0 >= 0x20 && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\") }
    }

    private struct Writer {
        var output: [UInt8]
        let pretty: Bool

        mutating func row(_ row: IntervalRow, depth: Int) {
            var object = open(depth)
            member("activeUsers", &object) { $0.integer(row.activeUsers) }
            if let dropped = row.droppedArrivals { member("droppedArrivals", &object) { $0.integer(dropped) } }
            member("index", &object) { $0.integer(row.index) }
            if let lag = row.maxScheduleLagMicros { member("maxScheduleLagMicros", &object) { $0.integer(lag) } }
            member("metrics", &object) { writer in
                writer.output.append(UInt8(ascii: "["))
                for (position, metric) in row.metrics.enumerated() {
                    if position > 0 { writer.output.append(UInt8(ascii: ",")) }
                    writer.newline(depth + 2)
                    writer.metric(metric, depth: depth + 2)
                }
                writer.newline(depth + 1)
                writer.output.append(UInt8(ascii: "]"))
            }
            if let span = row.span { member("span", &object) { $0.integer(span) } }
            member("startSeconds", &object) { $0.number(row.startSeconds) }
            close(object)
        }

        mutating func metric(_ metric: IntervalMetric, depth: Int) {
            var object = open(depth)
            member("count", &object) { $0.integer(metric.count) }
            member("errors", &object) { $0.integer(metric.errors) }
            if let failed = metric.failedHistogram { member("failedHistogram", &object) { $0.string(failed) } }
            if let histogram = metric.histogram { member("histogram", &object) { $0.string(histogram) } }
            member("id", &object) { writer in
                var id = writer.open(depth + 1)
                writer.member("flow", &id) { $0.string(metric.id.flow) }
                if let step = metric.id.step { writer.member("step", &id) { $0.string(step) } }
                writer.close(id)
            }
            member("maxMicros", &object) { $0.integer(metric.maxMicros) }
            member("p50Micros", &object) { $0.integer(metric.p50Micros) }
            member("p90Micros", &object) { $0.integer(metric.p90Micros) }
            member("p99Micros", &object) { $0.integer(metric.p99Micros) }
            if let upperBound = metric.upperBound {
                member("upperBound", &object) { $0.output += upperBound ? Array("true".utf8) : Array("false".utf8) }
            }
            close(object)
        }

        /// An object being written: its depth, and whether a member came yet.
        struct Object {
            let depth: Int
            var empty = true
        }

        mutating func open(_ depth: Int) -> Object {
            output.append(UInt8(ascii: "{"))
            return Object(depth: depth)
        }

        mutating func member(_ key: StaticString, _ object: inout Object, _ value: (inout Writer) -> Void) {
            if !object.empty { output.append(UInt8(ascii: ",")) }
            object.empty = false
            newline(object.depth + 1)
            output.append(UInt8(ascii: "\""))
            key.withUTF8Buffer { output.append(contentsOf: $0) }
            output.append(UInt8(ascii: "\""))
            if pretty {
                output.append(contentsOf: [UInt8(ascii: " "), UInt8(ascii: ":"), UInt8(ascii: " ")])
            } else {
                output.append(UInt8(ascii: ":"))
            }
            value(&self)
        }

        mutating func close(_ object: Object) {
            newline(object.depth)
            output.append(UInt8(ascii: "}"))
        }

        /// A new line `depth` levels in, when pretty-printing.
        mutating func newline(_ depth: Int) {
            guard pretty else { return }
            output.append(UInt8(ascii: "\n"))
            output.append(contentsOf: repeatElement(UInt8(ascii: " "), count: 2 * depth))
        }

        mutating func integer(_ value: Int) {
            if value >= 0 && value < 10 {
                output.append(UInt8(ascii: "0") + UInt8(value))
            } else {
                output.append(contentsOf: String(value).utf8)
            }
        }

        /// A `Double` as `JSONEncoder` writes one: its description, without a trailing `.0`.
        mutating func number(_ value: Double) {
            if value.magnitude < 1e15, value == value.rounded(.towardZero), !(value == 0 && value.sign == .minus) {
                integer(Int(value))
                return
            }
            var text = value.description
            if text.hasSuffix(".0") { text.removeLast(2) }
            output.append(contentsOf: text.utf8)
        }

        mutating func string(_ text: String) {
            output.append(UInt8(ascii: "\""))
            output.append(contentsOf: text.utf8)
            output.append(UInt8(ascii: "\""))
        }
    }
}
