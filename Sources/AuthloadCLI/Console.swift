import AuthloadCore
import Foundation

/// Where the CLI writes: results to standard output, problems to standard error.
///
/// Tests pass their own sinks to capture both.
public struct Console: Sendable {
    let out: @Sendable (String) -> Void
    let err: @Sendable (String) -> Void
    /// True when standard output is a terminal: the progress line then rewrites itself.
    let isTerminal: Bool

    public init(out: @escaping @Sendable (String) -> Void, err: @escaping @Sendable (String) -> Void, isTerminal: Bool) {
        self.out = out
        self.err = err
        self.isTerminal = isTerminal
    }

    public static let standard = Console(
        out: { text in FileHandle.standardOutput.write(Data(text.utf8)) },
        err: { text in FileHandle.standardError.write(Data(text.utf8)) },
        isTerminal: isatty(STDOUT_FILENO) != 0)

    func line(_ text: String) { out(text + "\n") }
    func error(_ text: String) { err("error: " + text + "\n") }

    /// Rewrites the current terminal line in place.
    func status(_ text: String) { out("\r\u{1B}[2K" + text) }

    /// The per-flow and per-step table printed when a run ends.
    func summary(_ result: RunResult) {
        if isTerminal { out("\r\u{1B}[2K") }
        let steps = result.metrics.filter { $0.seriesKind == "step" }.reduce(0) { $0 + $1.count }
        let events = result.metrics.filter(\.isEvent).reduce(0) { $0 + $1.count }
        let flows = result.metrics.filter { $0.id.step == nil }
        let flowCount = flows.reduce(0) { $0 + $1.count }
        let flowErrors = flows.reduce(0) { $0 + $1.errors }
        line(
            "finished in \(TerminalFormat.seconds(result.durationSeconds)): \(TerminalFormat.count(flowCount)) flows, "
                + "\(TerminalFormat.count(result.httpRequests ?? steps)) HTTP requests (\(TerminalFormat.count(steps)) request steps, \(TerminalFormat.count(events)) events), "
                + "\(TerminalFormat.count(flowErrors)) failed flows (\(TerminalFormat.percent(flowErrors, of: flowCount)))")
        if let byProtocol = result.httpRequestsByProtocol, let total = result.httpRequests {
            line("HTTP requests by protocol: " + byProtocol.text(total: total, TerminalFormat.count))
        }
        if let resent = result.httpResent, resent > 0 {
            line("HTTP requests sent again (h2 REFUSED_STREAM/GOAWAY, not in the count): " + TerminalFormat.count(resent))
        }
        let width = max(12, result.metrics.map { $0.id.description.count }.max() ?? 0)
        line("  " + "series".padding(width) + "  kind       count   errors  HTTP req     p50 ms     p95 ms     p99 ms     max ms")
        for metric in result.metrics where metric.count > 0 {
            line(
                "  " + metric.id.description.padding(width) + "  " + metric.seriesKind.padding(5)
                    + TerminalFormat.count(metric.count).leftPadding(11) + TerminalFormat.count(metric.errors).leftPadding(9)
                    + (metric.httpRequests.map(TerminalFormat.count) ?? "").leftPadding(10)
                    + [metric.p50Micros, metric.p95Micros, metric.p99Micros, metric.maxMicros].map {
                        TerminalFormat.millis($0).leftPadding(11)
                    }
                    .joined())
        }
        for peak in result.peaks {
            line("  peak \(peak.name) (\(peak.flow)): \(TerminalFormat.count(peak.peak))")
        }
        for error in result.errors.prefix(5) {
            line("  error: \(error.id) \(error.kind.rawValue) \(error.detail) ×\(TerminalFormat.count(error.count))")
        }
        for verdict in result.thresholds {
            let window = verdict.worstWindowStartSeconds.map { " (worst window from \(TerminalFormat.seconds($0)))" } ?? ""
            line(
                "  threshold \(verdict.passed ? "pass" : "FAIL"): \(verdict.name): measured \(verdict.measuredText)\(verdict.samplesText)\(window), bound \(verdict.boundText)"
            )
        }
        for note in result.notes { line("  note: \(note)") }
    }
}

/// Number formatting for the terminal.
enum TerminalFormat {
    static func count(_ value: Int) -> String {
        let digits = String(value.magnitude)
        var grouped = ""
        for (index, character) in digits.enumerated() {
            if index > 0 && (digits.count - index) % 3 == 0 { grouped.append(",") }
            grouped.append(character)
        }
        return (value < 0 ? "-" : "") + grouped
    }

    static func millis(_ micros: Int) -> String { String(format: "%.1f", Double(micros) / 1000) }

    static func seconds(_ seconds: Double) -> String { String(format: "%.1fs", seconds) }

    static func percent(_ part: Int, of whole: Int) -> String {
        whole == 0 ? "0%" : String(format: "%.2f%%", 100 * Double(part) / Double(whole))
    }
}

extension String {
    func padding(_ width: Int) -> String { count >= width ? self : self + String(repeating: " ", count: width - count) }
    func leftPadding(_ width: Int) -> String { count >= width ? " " + self : String(repeating: " ", count: width - count) + self }
}
