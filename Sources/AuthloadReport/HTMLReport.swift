import AuthloadCore

/// Renders `report.html`: one self-contained page a person can open from disk, mail, or attach to a CI run.
///
/// The page has inline CSS and inline SVG charts and nothing else: no scripts, no fonts, images or
/// stylesheets from anywhere, so it renders the same offline, years later, behind any proxy. Every string
/// that came from a profile or a server (names, error details, notes) is HTML-escaped.
///
/// ```swift
/// let html = HTMLReport.render(result)
/// try html.write(toFile: "report.html", atomically: true, encoding: .utf8)
/// ```
public enum HTMLReport {
    /// The complete page for `result`.
    public static func render(_ result: RunResult) -> String {
        let model = ReportModel(result)
        var page = """
            <!DOCTYPE html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <title>authload · \(Format.html(result.profileName))</title>
            <style>
            \(stylesheet)
            </style>
            </head>
            <body>
            <main>

            """
        page += header(result)
        page += generatorBanner(result)
        page += callout(result)
        page += thresholds(result)
        page += keyFigures(model)
        page += capacity(result)
        page += summaryTable(model)
        page += charts(model)
        page += errorTable(result)
        page += generatorHealth(result)
        page += shards(result)
        page += footer(result)
        page += "</main>\n</body>\n</html>\n"
        return page
    }

    // MARK: Sections

    private static func header(_ r: RunResult) -> String {
        let env = r.environment
        var facts: [(String, String)] = [
            ("Started", r.startedAt), ("Ended", r.endedAt),
            ("Duration", Format.duration(seconds: r.durationSeconds)),
            ("Interval", Format.duration(seconds: r.intervalSeconds)),
            ("Target", env.target), ("Host", env.hostname),
            ("Cores", Format.count(env.cores)), ("authload", env.authloadVersion)
        ]
        if let byProtocol = r.httpRequestsByProtocol, let total = r.httpRequests {
            facts.append(("HTTP requests", byProtocol.text(total: total, Format.count)))
        }
        if let resent = r.httpResent, resent > 0 {
            facts.append(("Sent again", "\(Format.count(resent)) (h2 REFUSED_STREAM/GOAWAY: not processed, not in the count)"))
        }
        if let shard = env.shard {
            let late = env.startLateSeconds.map { $0 > 1 ? ", started \(Format.duration(seconds: $0)) late" : "" } ?? ""
            facts.append(("Shard", "\(shard) of a sharded run\(late)"))
        }
        if let shards = r.shards { facts.append(("Shards", "merged from \(shards.count) (see Shards below)")) }
        if env.simulated == true {
            facts.insert(("Simulated", "on virtual time against a model of the service, in process: no network, no real server"), at: 0)
        }
        var out = """
            <header class="page-header">
            <p class="eyebrow">authload · load test report</p>
            <h1>\(Format.html(r.profileName)) <span class="status status-\(r.status.rawValue)">\(r.status.rawValue)</span>\(env.simulated == true ? " <span class=\"status status-simulated\">simulated</span>" : "")</h1>
            <dl class="facts">

            """
        for (label, value) in facts {
            out += "<div><dt>\(label)</dt><dd>\(Format.html(value))</dd></div>\n"
        }
        out += "</dl>\n</header>\n"
        return out
    }

    /// Notes the reader must see before trusting any number; red when the run did not finish as planned.
    private static func callout(_ r: RunResult) -> String {
        let headline: String
        let style: String
        switch r.status {
        case .completed:
            guard !r.notes.isEmpty || mergedRowsNote(r) != nil else { return "" }
            headline = "Read this first"
            style = "callout"
        case .interrupted:
            headline = "Run interrupted: these figures cover only part of the planned run."
            style = "callout callout-bad"
        case .aborted:
            headline = "Run aborted by a failing threshold: these figures cover only part of the planned run."
            style = "callout callout-bad"
        case .failed:
            headline = "Run failed: it could not go on, and these figures are incomplete."
            style = "callout callout-bad"
        case .running:
            headline =
                "Rebuilt from a checkpoint: the run ended without its final report (killed or crashed); these figures cover it up to the last checkpoint."
            style = "callout callout-bad"
        }
        var out = "<div class=\"\(style)\" role=\"note\">\n<strong>\(headline)</strong>\n"
        let notes = r.notes + [mergedRowsNote(r)].compactMap { $0 }
        if !notes.isEmpty {
            out += "<ul>\n" + notes.map { "<li>\(Format.html($0))</li>\n" }.joined() + "</ul>\n"
        }
        return out + "</div>\n"
    }

    /// What the charts show where a long run's older rows were merged: their percentiles are upper bounds.
    static func mergedRowsNote(_ r: RunResult) -> String? {
        let merged = r.timeseries.filter { $0.intervals > 1 }
        guard let first = merged.first, let last = merged.last else { return nil }
        return "The time series from \(Format.duration(seconds: first.startSeconds)) to "
            + "\(Format.duration(seconds: Double(last.end) * r.intervalSeconds)) is shown at coarser resolution "
            + "(\(merged.count) rows of up to \(merged.map(\.intervals).max() ?? 1) intervals) to keep memory constant: "
            + "counts and rates there are exact, but each percentile is the highest of the merged intervals' (an upper bound). "
            + "timeseries.csv keeps every interval."
    }

    private static func keyFigures(_ m: ReportModel) -> String {
        let r = m.result
        let rate = m.totalRequests > 0 ? Double(m.totalErrors) / Double(m.totalRequests) : 0
        // Results written before HTTP requests were counted fall back to request steps.
        let requests = r.httpRequests ?? m.totalRequests
        let rps = r.durationSeconds > 0 ? Double(requests) / r.durationSeconds : 0
        let tiles: [(String, String, Bool)] =
            [
                ("HTTP requests", Format.count(requests) + " req", false),
                ("Request steps", Format.count(m.totalRequests), false),
                ("Failed steps", Format.count(m.totalErrors), m.totalErrors > 0),
                ("Step error rate", Format.percent(rate), m.totalErrors > 0),
                ("Throughput", Format.rate(rps) + " req/s", false),
                ("Peak users", Format.count(m.peakUsers), false)
            ] + r.peaks.map { ("Peak \($0.name) (\($0.flow))", Format.count($0.peak), false) }
        var out = "<section class=\"tiles\" aria-label=\"Key figures\">\n"
        for (label, value, bad) in tiles {
            out += "<div class=\"tile\(bad ? " tile-bad" : "")\"><span>\(label)</span><strong>\(value)</strong></div>\n"
        }
        return out + "</section>\n"
    }

    private static func summaryTable(_ m: ReportModel) -> String {
        var out = """
            <section>
            <h2>Flows and steps</h2>
            <p class="hint">Cumulative over the whole run. Count is iterations on a flow row, samples on a step \
            row; an <em>event</em> is something the flow observed (a pushed status, a retry wait), not a request. \
            HTTP req is what each flow sent on the wire, retries and WebSocket upgrades included: what the \
            server's access log counts. Latencies in milliseconds: all samples, then the successful (OK) and the \
            failed (KO) ones apart; latency thresholds judge the successful ones unless they say otherwise. \
            /s over the measured duration.</p>
            <div class="table-wrap"><table class="numbers">
            <thead><tr><th class="text" rowspan="2">Flow / step</th><th rowspan="2">Count</th>\
            <th rowspan="2">Errors</th><th rowspan="2">Error %</th><th rowspan="2">/s</th><th rowspan="2">HTTP req</th>\
            <th class="group" colspan="6">Latency, all samples (ms)</th><th class="group" colspan="2">OK (ms)</th>\
            <th class="group" colspan="2">KO (ms)</th></tr>
            <tr><th>p50</th><th>p90</th><th>p95</th><th>p99</th><th>p99.9</th><th>Max</th><th>p50</th><th>p99</th>\
            <th>p50</th><th>p99</th></tr></thead>
            <tbody>

            """
        if m.result.metrics.isEmpty {
            out += "<tr><td class=\"text empty\" colspan=\"16\">No samples were recorded.</td></tr>\n"
        }
        for s in m.result.metrics {
            let hasSamples = s.count > 0
            func ms(_ micros: Int) -> String { hasSamples ? Format.ms(micros: micros) : "–" }
            let rate = hasSamples ? Format.percent(Double(s.errors) / Double(s.count)) : "–"
            let rps = m.result.durationSeconds > 0 ? Format.rate(Double(s.count) / m.result.durationSeconds) : "–"
            let event = s.isEvent ? " <span class=\"kind\">event</span>" : ""
            let name =
                s.id.step.map { "<td class=\"text step\">\(Format.html($0))\(event)</td>" }
                ?? "<td class=\"text flow\">\(Format.html(s.id.flow))</td>"
            let errorClass = s.errors > 0 ? " class=\"bad\"" : ""
            out += "<tr class=\"\(s.id.step == nil ? "flow-row" : "step-row")\">\(name)"
            out += "<td>\(Format.count(s.count))</td><td\(errorClass)>\(Format.count(s.errors))</td>"
            out += "<td\(errorClass)>\(rate)</td><td>\(rps)</td><td>\(s.httpRequests.map(Format.count) ?? "")</td>"
            out += [s.p50Micros, s.p90Micros, s.p95Micros, s.p99Micros, s.p999Micros, s.maxMicros]
                .map { "<td>\(ms($0))</td>" }.joined()
            for part in [s.successful, s.failed] {
                let cells = part.flatMap { $0.count > 0 ? [$0.p50Micros, $0.p99Micros].map { Format.ms(micros: $0) } : nil } ?? ["–", "–"]
                out += cells.map { "<td>\($0)</td>" }.joined()
            }
            out += "</tr>\n"
        }
        out += "</tbody>\n</table></div>\n</section>\n"
        return out
    }

    private static func errorTable(_ r: RunResult) -> String {
        var out = "<section>\n<h2>Errors</h2>\n"
        guard !r.errors.isEmpty else {
            return out + "<p class=\"hint\">No errors were recorded.</p>\n</section>\n"
        }
        // Most frequent first: the top rows are what someone triaging the run wants to see.
        let rows = r.errors.enumerated().sorted { a, b in
            a.element.count != b.element.count ? a.element.count > b.element.count : a.offset < b.offset
        }.map(\.element)
        out += """
            <div class="table-wrap"><table class="numbers">
            <thead><tr><th class="text">Flow</th><th class="text">Step</th><th class="text">Kind</th>\
            <th class="text">Detail</th><th>Count</th></tr></thead>
            <tbody>

            """
        for e in rows {
            out += "<tr><td class=\"text\">\(Format.html(e.id.flow))</td>"
            out += "<td class=\"text\">\(Format.html(e.id.step ?? "–"))</td>"
            out += "<td class=\"text\"><span class=\"kind\">\(Format.html(e.kind.rawValue))</span></td>"
            out += "<td class=\"text detail\">\(Format.html(e.detail))</td>"
            out += "<td>\(Format.count(e.count))</td></tr>\n"
        }
        return out + "</tbody>\n</table></div>\n</section>\n"
    }

    private static func footer(_ r: RunResult) -> String {
        """
        <footer>Written by authload \(Format.html(r.environment.authloadVersion)) from result.json \
        (schema \(r.schemaVersion)). The same figures are in summary.csv, timeseries.csv and errors.csv.</footer>

        """
    }
}

/// Figures derived once from a result and shared by the page's sections.
struct ReportModel {
    let result: RunResult
    /// Flow names in the order the profile declares them.
    let flows: [String]
    let totalRequests: Int
    let totalErrors: Int
    let peakUsers: Int
    /// First and last interval start, shared by every time chart so they line up; nil without intervals.
    let timeRange: (lower: Double, upper: Double)?
    /// Flows for which per-step figures exist; their whole-flow rows are not requests of their own.
    private let flowsWithSteps: Set<String>
    /// Series that time observed events (GCCS statuses), not requests.
    private let events: Set<MetricID>

    init(_ result: RunResult) {
        self.result = result
        var flows: [String] = []
        var seen: Set<String> = []
        var withSteps: Set<String> = []
        let ids = result.metrics.map(\.id) + result.timeseries.flatMap { $0.metrics.map(\.id) }
        for id in ids {
            if seen.insert(id.flow).inserted { flows.append(id.flow) }
            if id.step != nil { withSteps.insert(id.flow) }
        }
        self.flows = flows
        self.flowsWithSteps = withSteps
        let events = Set(result.metrics.filter(\.isEvent).map(\.id))
        self.events = events
        let requests = result.metrics.filter { Self.isRequest($0.id, flowsWithSteps: withSteps, events: events) }
        totalRequests = requests.reduce(0) { $0 + $1.count }
        totalErrors = requests.reduce(0) { $0 + $1.errors }
        peakUsers = result.timeseries.map(\.activeUsers).max() ?? 0
        let starts = result.timeseries.map(\.startSeconds).filter(\.isFinite)
        timeRange = starts.min().flatMap { lower in starts.max().map { (lower, $0) } }
    }

    /// Whether a series counts towards request totals.
    ///
    /// Each step is one request; a whole-flow row repeats its steps and would count them twice.
    /// A flow recorded without steps is the exception: its flow row is its only request. Event series
    /// (a status the server pushed) are no requests at all.
    func isRequest(_ id: MetricID) -> Bool { Self.isRequest(id, flowsWithSteps: flowsWithSteps, events: events) }

    private static func isRequest(_ id: MetricID, flowsWithSteps: Set<String>, events: Set<MetricID>) -> Bool {
        !events.contains(id) && (id.step != nil || !flowsWithSteps.contains(id.flow))
    }
}
