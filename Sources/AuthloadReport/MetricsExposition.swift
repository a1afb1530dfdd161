import AuthloadCore

/// A run's live figures in the Prometheus text exposition format (0.0.4), or in OpenMetrics 1.0 when the
/// scraper asks for it, rendered from the same cumulative histograms and counts the report uses.
///
/// Names follow Prometheus conventions: base units (seconds), `_total` counters, and labels whose values
/// come only from the profile (flow and step names, threshold rules) or from a bounded set (error kinds, the
/// few stable error details per series) — never a user name, token or anything a server sent back verbatim.
///
/// ```swift
/// let text = MetricsExposition.render(collector.liveSnapshot(), run: info, format: .prometheus)
/// ```
public enum MetricsExposition {
    public enum Format: Sendable {
        case prometheus, openMetrics

        /// The `Content-Type` of a scrape answered in this format.
        public var contentType: String {
            switch self {
            case .prometheus: "text/plain; version=0.0.4; charset=utf-8"
            case .openMetrics: "application/openmetrics-text; version=1.0.0; charset=utf-8"
            }
        }

        /// OpenMetrics when the scraper's `Accept` header asks for it, the classic text format otherwise.
        public init(accept: String?) {
            self = accept?.contains("application/openmetrics-text") == true ? .openMetrics : .prometheus
        }
    }

    /// What identifies the run: the `authload_run_info` labels, and what the process measures of itself.
    public struct RunInfo: Sendable {
        public var profile: String
        public var version: String
        /// `I/N` for a shard of a sharded run; empty otherwise.
        public var shard: String
        /// The process's CPU time so far, seconds.
        public var cpuSeconds: Double
        /// Each flow gauge's current reading (flow, name, value), e.g. Streem's concurrent refreshes.
        public var gauges: [(flow: String, name: String, value: Int)]
        /// Client sockets open now: HTTP connections, and WebSockets past their handshake.
        public var openConnections: Int
        public var openWebSockets: Int
        /// A rehearsal on virtual time (`--simulate`): `authload_run_info` says so with `simulated="true"`, so a
        /// dashboard cannot take it for the service.
        public var simulated = false

        public init(
            profile: String, version: String, shard: String = "", cpuSeconds: Double = 0,
            gauges: [(flow: String, name: String, value: Int)] = [], openConnections: Int = 0, openWebSockets: Int = 0
        ) {
            self.profile = profile
            self.version = version
            self.shard = shard
            self.cpuSeconds = cpuSeconds
            self.gauges = gauges
            self.openConnections = openConnections
            self.openWebSockets = openWebSockets
        }
    }

    /// Latency bucket bounds, seconds: auth flows run from a few milliseconds (a cached token) to tens of
    /// seconds (an MFA code, a GCCS verification).
    public static let bucketSeconds: [Double] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60]

    /// Error details kept apart per series; the rest are summed under `detail="other"`, so a server that
    /// answers with many different statuses cannot grow the exposition without bound.
    public static let maxDetailsPerSeries = 20

    public static func render(_ snapshot: LiveSnapshot, run: RunInfo, format: Format) -> String {
        var out = Writer(format: format)
        out.family("authload_run", type: "info", help: "The running profile, authload's version and the shard.")
        var info = ["profile": run.profile, "version": run.version, "shard": run.shard]
        if run.simulated { info["simulated"] = "true" }
        out.sample("authload_run_info", info, 1)

        let flows = snapshot.ids.indices.filter { snapshot.ids[$0].step == nil }
        let steps = snapshot.ids.indices.filter { snapshot.ids[$0].step != nil }

        out.family(
            "authload_http_requests", type: "counter",
            help:
                "HTTP requests sent on the wire, retries and WebSocket upgrades included, by the HTTP version that answered (none: no answer)."
        )
        for index in flows {
            let series = snapshot.series[index]
            let counts = [
                ("h1", series.requestsByProtocol.h1), ("h2", series.requestsByProtocol.h2),
                ("none", series.requestsByProtocol.unanswered(of: series.httpRequests))
            ]
            // A protocol appears once it has carried a request, so a run that speaks one version shows one series.
            for (name, count) in counts where count > 0 {
                out.sample("authload_http_requests_total", ["flow": snapshot.ids[index].flow, "protocol": name], Double(count))
            }
        }
        out.family(
            "authload_http_resent", type: "counter",
            help:
                "Times requests were sent again because the server had not processed them (h2 REFUSED_STREAM or GOAWAY); not in authload_http_requests."
        )
        for index in flows {
            out.sample("authload_http_resent_total", ["flow": snapshot.ids[index].flow], Double(snapshot.series[index].httpResent))
        }
        out.family("authload_flows", type: "counter", help: "Flow iterations finished.")
        for index in flows { out.sample("authload_flows_total", labels(snapshot.ids[index]), Double(snapshot.series[index].count)) }
        out.family(
            "authload_steps", type: "counter", help: "Step samples: kind=\"request\" for request steps, kind=\"event\" for observed events."
        )
        for index in steps {
            var stepLabels = labels(snapshot.ids[index])
            stepLabels["kind"] = snapshot.events[index] ? "event" : "request"
            out.sample("authload_steps_total", stepLabels, Double(snapshot.series[index].count))
        }
        out.family("authload_errors", type: "counter", help: "Failed flows and steps, by outcome kind and stable detail.")
        for index in snapshot.ids.indices {
            for error in details(snapshot.series[index].errorCounts) {
                var errorLabels = labels(snapshot.ids[index])
                errorLabels["kind"] = error.kind
                errorLabels["detail"] = error.detail
                out.sample("authload_errors_total", errorLabels, Double(error.count))
            }
        }
        out.family("authload_flow_duration_seconds", type: "histogram", help: "Flow iteration latency, failed iterations included.")
        for index in flows {
            out.histogram("authload_flow_duration_seconds", labels(snapshot.ids[index]), snapshot.series[index].histogram)
        }
        out.family("authload_step_duration_seconds", type: "histogram", help: "Step latency, failed samples included.")
        for index in steps {
            out.histogram("authload_step_duration_seconds", labels(snapshot.ids[index]), snapshot.series[index].histogram)
        }

        out.family("authload_active_users", type: "gauge", help: "Virtual users alive at the last interval.")
        out.sample("authload_active_users", [:], Double(snapshot.activeUsers))
        out.family("authload_open_connections", type: "gauge", help: "Client sockets open now, by kind: HTTP connections and WebSockets.")
        out.sample("authload_open_connections", ["kind": "http"], Double(run.openConnections))
        out.sample("authload_open_connections", ["kind": "websocket"], Double(run.openWebSockets))
        // Named for what it counts, users of a flow in one activity at once: promtool rejects a name holding its type.
        out.family(
            "authload_flow_in_progress", type: "gauge", help: "Users of a flow in one of its activities at once, e.g. Streem refreshes.")
        for gauge in run.gauges { out.sample("authload_flow_in_progress", ["flow": gauge.flow, "name": gauge.name], Double(gauge.value)) }
        out.family(
            "authload_dropped_arrivals", type: "counter",
            help: "Arrivals the generator did not start: at the maxUsers cap, late, or while saturated.")
        out.sample("authload_dropped_arrivals_total", [:], Double(snapshot.droppedArrivals))
        out.family("authload_schedule_lag_max_seconds", type: "gauge", help: "The worst lag of a start behind its schedule so far.")
        out.sample("authload_schedule_lag_max_seconds", [:], Double(snapshot.maxScheduleLagMicros) / 1e6)
        out.family("process_cpu_seconds", type: "counter", help: "CPU time of the authload process.")
        out.sample("process_cpu_seconds_total", [:], run.cpuSeconds)
        // A pending threshold has no passing sample: 0 would read as a failure before anything has been judged.
        let thresholds = zip(snapshot.thresholds, snapshot.thresholdStates)
        out.family(
            "authload_threshold_passing", type: "gauge",
            help: "1 while a threshold holds, 0 once it fails; no sample while it is pending (not judged yet).")
        for (verdict, state) in thresholds where state != .pending {
            out.sample("authload_threshold_passing", ["threshold": verdict.name, "path": verdict.path], state == .passing ? 1 : 0)
        }
        out.family(
            "authload_threshold_state", type: "gauge",
            help: "1 for the state a threshold is in: pending until its first window settles, then passing or failing.")
        for (verdict, current) in thresholds {
            for state in ThresholdState.allCases {
                out.sample(
                    "authload_threshold_state", ["threshold": verdict.name, "path": verdict.path, "state": state.rawValue],
                    state == current ? 1 : 0)
            }
        }
        out.family("authload_elapsed_seconds", type: "gauge", help: "How long the run has gone on.")
        out.sample("authload_elapsed_seconds", [:], snapshot.elapsed.seconds)
        if format == .openMetrics { out.text += "# EOF\n" }
        return out.text
    }

    private static func labels(_ id: MetricID) -> [String: String] {
        id.step.map { ["flow": id.flow, "step": $0] } ?? ["flow": id.flow]
    }

    /// The series' errors by kind and detail, the most frequent details first, the rest pooled as `other`.
    private static func details(_ counts: [Outcome: Int]) -> [(kind: String, detail: String, count: Int)] {
        let sorted = counts.sorted { ($0.value, $1.key.description) > ($1.value, $0.key.description) }
        var kept = sorted.prefix(maxDetailsPerSeries).map { (kind: $0.key.kind.rawValue, detail: $0.key.detail, count: $0.value) }
        var other: [String: Int] = [:]
        for (outcome, count) in sorted.dropFirst(maxDetailsPerSeries) { other[outcome.kind.rawValue, default: 0] += count }
        kept += other.sorted { $0.key < $1.key }.map { (kind: $0.key, detail: "other", count: $0.value) }
        return kept.sorted { ($0.kind, $0.detail) < ($1.kind, $1.detail) }
    }

    /// Builds the text, one family at a time.
    private struct Writer {
        let format: Format
        var text = ""

        /// `# HELP` and `# TYPE` of a family. In OpenMetrics a counter family is named without `_total`
        /// and an info family without `_info`; the classic format has no `info` type and calls it a gauge.
        mutating func family(_ name: String, type: String, help: String) {
            let (familyName, familyType): (String, String) =
                switch (format, type) {
                case (.prometheus, "info"): (name + "_info", "gauge")
                case (.prometheus, "counter"): (name + "_total", type)
                default: (name, type)
                }
            text += "# HELP \(familyName) \(help)\n# TYPE \(familyName) \(familyType)\n"
        }

        mutating func sample(_ name: String, _ labels: [String: String], _ value: Double) {
            text += name + Self.labelText(labels) + " " + Self.number(value) + "\n"
        }

        mutating func histogram(_ name: String, _ labels: [String: String], _ histogram: Histogram) {
            let bounds = MetricsExposition.bucketSeconds.map { Int(($0 * 1e6).rounded()) }
            for (bound, count) in zip(MetricsExposition.bucketSeconds, histogram.cumulativeCounts(atOrBelow: bounds)) {
                sample(name + "_bucket", labels.merging(["le": Self.number(bound)]) { $1 }, Double(count))
            }
            sample(name + "_bucket", labels.merging(["le": "+Inf"]) { $1 }, Double(histogram.totalCount))
            sample(name + "_count", labels, Double(histogram.totalCount))
            sample(name + "_sum", labels, Double(histogram.sumMicros) / 1e6)
        }

        static func labelText(_ labels: [String: String]) -> String {
            guard !labels.isEmpty else { return "" }
            return "{" + labels.sorted { $0.key < $1.key }.map { "\($0.key)=\"\(escape($0.value))\"" }.joined(separator: ",") + "}"
        }

        /// Label values escape backslash, double quote and line feed, as both formats require.
        static func escape(_ value: String) -> String {
            var out = ""
            for character in value {
                switch character {
                case "\\": out += "\\\\"
                case "\"": out += "\\\""
                case "\n": out += "\\n"
                default: out.append(character)
                }
            }
            return out
        }

        static func number(_ value: Double) -> String {
            if value.isNaN { return "NaN" }
            if value.isInfinite { return value > 0 ? "+Inf" : "-Inf" }
            if value == value.rounded(), abs(value) < 1e15 { return String(Int(value)) }
            return String(value)
        }
    }
}
