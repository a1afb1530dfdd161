import AuthloadCore

/// Renders the spreadsheet views of a run: `summary.csv`, `timeseries.csv` and `errors.csv`.
///
/// Files follow RFC 4180: CRLF line ends, a header row, and fields quoted only when they hold a comma,
/// a double quote or a line break. Latencies are milliseconds with three decimals (people read these in
/// spreadsheets, where microsecond integers are hard to take in); every header that carries a unit names it.
/// A figure that does not exist — a rate over zero seconds, a latency of zero samples — is an empty cell,
/// never `0` or `nan`, so spreadsheet averages are not dragged down by made-up values.
///
/// ```swift
/// let text = CSVWriter.summary(result)
/// // flow,step,count,errors,error_rate,rps,min_ms,mean_ms,p50_ms,...,max_ms,kind,http_requests
/// // login,,1200,12,0.010000,20.000,3.100,12.045,10.200,...,95.000,flow,2400
/// ```
public enum CSVWriter {
    /// Column names of `summary.csv`, in order.
    public static let summaryHeader = [
        "flow", "step", "count", "errors", "error_rate", "rps", "min_ms", "mean_ms",
        "p50_ms", "p90_ms", "p95_ms", "p99_ms", "p99_9_ms", "max_ms", "kind", "http_requests",
        "ok_count", "ok_p50_ms", "ok_p95_ms", "ok_p99_ms", "failed_p50_ms", "failed_p99_ms"
    ]

    /// Column names of `timeseries.csv`, in order.
    public static let timeseriesHeader = [
        "interval", "start_s", "active_users", "flow", "step", "count", "errors", "rps",
        "p50_ms", "p90_ms", "p99_ms", "max_ms", "intervals", "percentiles"
    ]

    /// Column names of `errors.csv`, in order.
    public static let errorsHeader = ["flow", "step", "kind", "detail", "count"]

    /// One row per flow and per step, in profile order; `step` is empty on a whole-flow row.
    ///
    /// New columns go at the end, so scripts that read columns by position keep working.
    /// `kind` says what a row counts: `flow` (iterations), `step` (request steps) or `event` (something the
    /// flow observed, such as a pushed status; no request). `http_requests`, on flow rows only, is the HTTP
    /// requests the flow sent on the wire — retries, WebSocket upgrades and each call of a composite step
    /// included — which is what the server's access log counts. `ok_*` and `failed_*` are the percentiles of
    /// the successful and of the failed samples alone (an instant 503 pulls the pooled p50 down; these do not
    /// mix). `rps` divides the count by the run's measured
    /// duration; `error_rate` is a fraction (0.01 = 1 %), the same scale a profile's `maxRate` threshold uses.
    public static func summary(_ result: RunResult) -> String {
        var rows = [summaryHeader]
        for m in result.metrics {
            let hasSamples = m.count > 0
            func latency(_ micros: Int) -> String { hasSamples ? Format.millis(micros: micros) : "" }
            rows.append(
                [
                    m.id.flow, m.id.step ?? "",
                    String(m.count), String(m.errors),
                    hasSamples ? Format.fixed(Double(m.errors) / Double(m.count), decimals: 6) : "",
                    perSecond(m.count, over: result.durationSeconds),
                    latency(m.minMicros),
                    hasSamples ? Format.millis(micros: m.meanMicros) : "",
                    latency(m.p50Micros), latency(m.p90Micros), latency(m.p95Micros),
                    latency(m.p99Micros), latency(m.p999Micros), latency(m.maxMicros),
                    m.seriesKind, m.httpRequests.map(String.init) ?? ""
                ] + split(m.successful, m.failed))
        }
        return document(rows)
    }

    /// The `ok_*` and `failed_*` cells: percentiles of the successful and of the failed samples alone, empty
    /// where there are none (or the result predates the split).
    private static func split(_ ok: LatencyFigures?, _ failed: LatencyFigures?) -> [String] {
        func ms(_ figures: LatencyFigures?, _ micros: (LatencyFigures) -> Int) -> String {
            guard let figures, figures.count > 0 else { return "" }
            return Format.millis(micros: micros(figures))
        }
        return [
            ok.map { String($0.count) } ?? "", ms(ok, \.p50Micros), ms(ok, \.p95Micros), ms(ok, \.p99Micros),
            ms(failed, \.p50Micros), ms(failed, \.p99Micros)
        ]
    }

    /// One row per interval and series; an interval without samples still gets a row (empty `flow` and
    /// `step`) so that `active_users` over time has no holes.
    ///
    /// `intervals` is how many intervals a row covers: 1, except in a `result.json` of a run longer than two
    /// hours, whose older rows were merged to keep memory constant. A merged row's counts are exact, but its
    /// percentiles are the highest of the merged intervals' — an upper bound, which `percentiles` says
    /// (`exact` or `upper bound`) — except for series that kept their histograms. The rows of shards merged by
    /// `authload merge` are marked the same way. A run's own `timeseries.csv` is written as the run goes, one row per
    /// interval, and is never rewritten from merged rows.
    public static func timeseries(_ result: RunResult) -> String {
        timeseries(result, from: 0, header: true)
    }

    /// The rows of intervals numbered `from` on, with or without the header: what a checkpoint appends.
    public static func timeseries(_ result: RunResult, from first: Int, header: Bool) -> String {
        var doc = Document(header: header ? timeseriesHeader : nil)
        let intervals = result.timeseries.drop { $0.index < first }
        // A 24-hour soak has over a million rows here, so rows go straight into one string.
        doc.reserve(rows: intervals.reduce(0) { $0 + max(1, $1.metrics.count) }, bytes: 64)
        for interval in intervals {
            // A merged row of a long run covers several intervals: its rate is over all of them.
            let seconds = result.intervalSeconds * Double(interval.intervals)
            let lead = [
                String(interval.index), Format.fixed(interval.startSeconds, decimals: 3), String(interval.activeUsers)
            ].joined(separator: ",")
            let span = [String(interval.intervals), interval.intervals > 1 ? "upper bound" : "exact"]
            guard !interval.metrics.isEmpty else {
                doc.row(lead: lead, ["", "", "0", "0", perSecond(0, over: seconds), "", "", "", ""] + span)
                continue
            }
            for m in interval.metrics {
                let hasSamples = m.count > 0
                // Older results mark nothing: their merged rows' percentiles are upper bounds by their span alone.
                let bound = m.upperBound == true || (interval.intervals > 1 && m.histogram == nil)
                func latency(_ micros: Int) -> String { hasSamples ? Format.millis(micros: micros) : "" }
                doc.row(
                    lead: lead,
                    [
                        m.id.flow, m.id.step ?? "", String(m.count), String(m.errors),
                        perSecond(m.count, over: seconds),
                        latency(m.p50Micros), latency(m.p90Micros), latency(m.p99Micros), latency(m.maxMicros),
                        String(interval.intervals), bound ? "upper bound" : "exact"
                    ])
            }
        }
        return doc.text
    }

    /// One row per series, kind and detail, in the order the run recorded them.
    public static func errors(_ result: RunResult) -> String {
        var rows = [errorsHeader]
        for e in result.errors {
            rows.append([e.id.flow, e.id.step ?? "", e.kind.rawValue, e.detail, String(e.count)])
        }
        return document(rows)
    }

    /// Quotes a field when RFC 4180 requires it: it holds a comma, a double quote, CR or LF.
    public static func field(_ text: String) -> String {
        let needsQuotes = text.utf8.contains {
            $0 == UInt8(ascii: ",") || $0 == UInt8(ascii: "\"")
                || $0 == UInt8(ascii: "\n") || $0 == UInt8(ascii: "\r")
        }
        guard needsQuotes else { return text }
        var quoted = "\""
        for ch in text.unicodeScalars {
            if ch == "\"" { quoted += "\"\"" } else { quoted.unicodeScalars.append(ch) }
        }
        return quoted + "\""
    }

    public static let capacityHeader = [
        "stage", "from", "target", "unit", "start_s", "end_s", "flows", "errors", "error_rate", "throughput_per_s",
        "p50_ms", "p99_ms", "passed", "failed_thresholds", "last_inside_slo", "knee"
    ]

    /// One row per stage of a staged run (`capacity.csv`): what it achieved, whether it met every threshold,
    /// and which stage is the last inside the SLO and which the knee. Nil for a run without stages.
    public static func capacity(_ result: RunResult) -> String? {
        guard let capacity = result.capacity else { return nil }
        var rows = [capacityHeader]
        for (index, stage) in capacity.stages.enumerated() {
            let hasSamples = stage.flows > 0
            rows.append([
                String(stage.number), Format.fixed(stage.from, decimals: 3), Format.fixed(stage.target, decimals: 3), capacity.unit,
                Format.fixed(stage.startSeconds, decimals: 3), Format.fixed(stage.endSeconds, decimals: 3),
                String(stage.flows), String(stage.errors),
                hasSamples ? Format.fixed(stage.errorRate, decimals: 6) : "",
                Format.fixed(stage.throughput, decimals: 3),
                hasSamples ? Format.millis(micros: stage.p50Micros) : "", hasSamples ? Format.millis(micros: stage.p99Micros) : "",
                capacity.judged ? (stage.passed ? "true" : "false") : "",
                stage.failedThresholds.joined(separator: "; "),
                capacity.lastPassingStage == index ? "true" : "false",
                capacity.kneeStage == index ? "true" : "false"
            ])
        }
        return document(rows)
    }

    // MARK: Helpers

    private static func document(_ rows: [[String]]) -> String {
        var doc = Document(header: rows[0])
        for row in rows.dropFirst() { doc.row(row) }
        return doc.text
    }

    /// A CSV file being built row by row.
    private struct Document {
        private(set) var text = ""

        init(header: [String]?) {
            if let header { row(header) }
        }

        mutating func reserve(rows: Int, bytes: Int) { text.reserveCapacity(text.utf8.count + rows * bytes) }

        /// Appends a row whose first fields are already joined and need no quoting.
        mutating func row(lead: String = "", _ fields: [String]) {
            if !lead.isEmpty {
                text += lead
                text += ","
            }
            for (i, f) in fields.enumerated() {
                if i > 0 { text += "," }
                text += field(f)
            }
            text += "\r\n"
        }
    }

    private static func perSecond(_ count: Int, over seconds: Double) -> String {
        guard seconds > 0 else { return "" }
        return Format.fixed(Double(count) / seconds, decimals: 3)
    }
}
