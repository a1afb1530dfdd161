import AuthloadCore

/// A regression table of one run against a baseline: per flow and step, p50, p99 and error-rate deltas.
///
/// A nightly job compares its run with the last good one; any series beyond the tolerances is a
/// regression (`authload compare` exits 2). A series the baseline had and the new run lacks counts as
/// one too, since whatever it measured can no longer be vouched for.
///
/// ```swift
/// let comparison = RunComparison(base: lastGood, new: tonight, tolerances: CompareTolerances())
/// print(comparison.render())
/// ```
public struct RunComparison: Sendable {
    public struct Row: Sendable {
        public var id: MetricID
        public var base: MetricSummary?
        public var new: MetricSummary?
        /// What got worse beyond its tolerance: `p50`, `p99`, `error rate`, `missing`; empty when fine.
        public var regressions: [String]
    }

    public let tolerances: CompareTolerances
    public let rows: [Row]

    public init(base: RunResult, new: RunResult, tolerances: CompareTolerances) {
        self.tolerances = tolerances
        var rows: [Row] = []
        for b in base.metrics {
            let n = new.metrics.first { $0.id == b.id }
            rows.append(Row(id: b.id, base: b, new: n, regressions: Self.regressions(b, n, tolerances)))
        }
        for n in new.metrics where !base.metrics.contains(where: { $0.id == n.id }) {
            rows.append(Row(id: n.id, base: nil, new: n, regressions: []))
        }
        self.rows = rows
    }

    public var regressed: Bool { rows.contains { !$0.regressions.isEmpty } }

    private static func regressions(_ b: MetricSummary, _ n: MetricSummary?, _ t: CompareTolerances) -> [String] {
        guard let n else { return b.count > 0 ? ["missing"] : [] }
        guard b.count > 0, n.count > 0 else { return [] }
        var found: [String] = []
        let minDelta = Int(t.minLatencyDelta.microseconds)
        func slower(_ base: Int, _ new: Int, by tolerance: Double) -> Bool {
            new - base > minDelta && Double(new) > Double(base) * (1 + tolerance)
        }
        if slower(b.p50Micros, n.p50Micros, by: t.p50) { found.append("p50") }
        if slower(b.p99Micros, n.p99Micros, by: t.p99) { found.append("p99") }
        if rate(n) - rate(b) > t.errorRate + 1e-12 { found.append("error rate") }
        return found
    }

    private static func rate(_ m: MetricSummary) -> Double { m.count > 0 ? Double(m.errors) / Double(m.count) : 0 }

    /// The table as plain text for a terminal or a CI log, with a last line that says what it means.
    public func render() -> String {
        let header = ["series", "p50 ms (base → new)", "p99 ms (base → new)", "error rate (base → new)", "verdict"]
        var table = [header]
        for row in rows {
            func latency(_ pick: (MetricSummary) -> Int) -> String {
                guard let b = row.base, let n = row.new else {
                    return row.base.map { Format.ms(micros: pick($0)) } ?? row.new.map { "new: " + Format.ms(micros: pick($0)) } ?? "–"
                }
                return "\(Format.ms(micros: pick(b))) → \(Format.ms(micros: pick(n))) (\(Self.change(pick(b), pick(n))))"
            }
            let errors: String
            if let b = row.base, let n = row.new {
                errors = "\(Format.percent(Self.rate(b))) → \(Format.percent(Self.rate(n)))"
            } else {
                errors = (row.base ?? row.new).map { Format.percent(Self.rate($0)) } ?? "–"
            }
            let verdict =
                row.regressions.isEmpty ? (row.base == nil ? "new" : "ok") : "REGRESSED: " + row.regressions.joined(separator: ", ")
            table.append([row.id.description, latency(\.p50Micros), latency(\.p99Micros), errors, verdict])
        }
        let widths = header.indices.map { column in table.map { $0[column].count }.max() ?? 0 }
        var out = table.map { cells in
            cells.enumerated().map { $0.element.padding(to: widths[$0.offset]) }.joined(separator: "  ").trimmingTrailingSpaces
        }.joined(separator: "\n")
        let count = rows.filter { !$0.regressions.isEmpty }.count
        out +=
            "\n\n"
            + (count == 0
                ? "no regressions beyond the tolerances"
                : "\(count) of \(rows.count) series regressed beyond the tolerances")
        out +=
            " (p50 +\(Format.percent(tolerances.p50)), p99 +\(Format.percent(tolerances.p99)), error rate +\(Format.percent(tolerances.errorRate)); "
            + "latency changes under \(DurationText.format(tolerances.minLatencyDelta)) ignored)"
        return out
    }

    /// `+30.0 %`, `-5.2 %`, or `±0 %`.
    static func change(_ base: Int, _ new: Int) -> String {
        guard base > 0 else { return new == 0 ? "±0 %" : "new" }
        let fraction = Double(new - base) / Double(base)
        if fraction == 0 { return "±0 %" }
        return (fraction > 0 ? "+" : "-") + Format.percent(Swift.abs(fraction))
    }
}

extension String {
    fileprivate func padding(to width: Int) -> String { count >= width ? self : self + String(repeating: " ", count: width - count) }
    fileprivate var trimmingTrailingSpaces: String {
        var text = self
        while text.last == " " { text.removeLast() }
        return text
    }
}
