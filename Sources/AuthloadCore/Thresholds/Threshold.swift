/// One pass/fail rule of a run: a bound on a series' latency percentile, error rate or throughput.
///
/// Over the whole run by default; with a `window`, over every sliding window of that length, and the
/// worst window decides — so a two-minute spike that the whole-run p99 would hide still fails.
///
/// ```json
/// "thresholds": [
///   { "metric": "login", "percentile": 99, "max": "800ms" },               // successful samples
///   { "metric": "login", "percentile": 99, "max": "1s", "samples": "all" }, // failed ones too
///   { "metric": "login.logout", "percentile": 95, "max": "200ms", "window": "1m" },
///   { "metric": "steps", "maxErrorRate": 0.01, "abortOnFail": true, "abortGrace": "30s" },
///   { "metric": "login", "minThroughput": 50 }
/// ]
/// ```
public struct Threshold: Sendable, Equatable {
    public enum Bound: Sendable, Equatable {
        /// The percentile's latency must not exceed `max`.
        case percentile(Double, max: Duration)
        /// Errors ÷ samples must not exceed this fraction.
        case errorRate(max: Double)
        /// Samples per second must reach this.
        case throughput(min: Double)
    }

    /// Which samples a latency bound judges.
    public enum Samples: String, Sendable, Equatable, Codable, CaseIterable {
        /// Successful samples only, the default: a fast failure (an instant 503) must not make latency look better.
        case successful
        /// Every sample, failed ones included.
        case all
    }

    /// A flow (`login`), a flow's step (`login.logout`), or `steps`: every request step of every flow pooled.
    public var metric: String
    /// For a percentile bound, which samples it judges; successful ones unless the profile says `"samples": "all"`.
    public var samples = Samples.successful
    public var bound: Bound
    /// Sliding-window length; nil judges the whole run.
    public var window: Duration?
    /// Stop the run (draining, as a first Ctrl-C does) as soon as this threshold fails.
    public var abortOnFail: Bool
    /// How long after the start a failure may not yet abort (the warm-up).
    public var abortGrace: Duration
    /// Where the threshold sits in the profile, e.g. `thresholds[2]`, for messages.
    public var path: String

    /// The metric name that pools every request step of every flow (events, such as pushed statuses, are not requests).
    public static let allSteps = "steps"

    public init(
        metric: String, bound: Bound, window: Duration? = nil, abortOnFail: Bool = false,
        abortGrace: Duration = .zero, path: String = "thresholds"
    ) {
        self.metric = metric
        self.bound = bound
        self.window = window
        self.abortOnFail = abortOnFail
        self.abortGrace = abortGrace
        self.path = path
    }

    /// A short readable statement of the rule, e.g. `login.logout p95 ≤ 200ms (1m windows)`.
    public var name: String {
        let rule: String
        switch bound {
        case .percentile(let p, let max): rule = "\(Self.percentileName(p)) ≤ \(DurationText.format(max))"
        case .errorRate(let max): rule = "error rate ≤ \(Self.percent(max))"
        case .throughput(let min): rule = "throughput ≥ \(Self.number(min))/s"
        }
        let scope = window.map { " (\(DurationText.format($0)) windows)" } ?? ""
        return "\(metric) \(rule)\(scope)"
    }

    static func percentileName(_ p: Double) -> String { "p" + number(p) }

    static func number(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : String(value)
    }

    static func percent(_ fraction: Double) -> String { number((fraction * 10_000).rounded() / 100) + "%" }
}

extension Profile {
    /// Reads the profile's `thresholds` list; metric names are checked later against the flows' steps.
    static func thresholds(_ reader: ProfileReader?) throws(ProfileError) -> [Threshold] {
        guard let reader else { return [] }
        return try reader.elements().map { element throws(ProfileError) in try threshold(element) }
    }

    private static func threshold(_ reader: ProfileReader) throws(ProfileError) -> Threshold {
        try reader.rejectUnknownKeys(allowed: [
            "metric", "percentile", "max", "maxErrorRate", "maxRate", "minThroughput", "window", "abortOnFail", "abortGrace", "samples"
        ])
        let metricReader = try reader.required("metric")
        var metric = try metricReader.string()
        guard !metric.isEmpty else { throw metricReader.error("must name a flow, a flow's step (flow.step) or \"steps\"") }
        if metric == "errors" { metric = Threshold.allSteps }

        var bounds: [Threshold.Bound] = []
        let percentile = try reader.optional("percentile")
        let max = try reader.optional("max")
        switch (percentile, max) {
        case (let p?, let m?):
            let value = try p.double()
            guard value > 0, value <= 100 else { throw p.error("must be in (0, 100], e.g. 99 or 99.9") }
            bounds.append(.percentile(value, max: try m.positiveDuration()))
        case (let p?, nil): throw p.error("needs \"max\" beside it (the latency bound, e.g. \"500ms\")")
        case (nil, let m?): throw m.error("needs \"percentile\" beside it (e.g. 99)")
        case (nil, nil): break
        }
        for key in ["maxErrorRate", "maxRate"] {
            if let rate = try reader.optional(key) { bounds.append(.errorRate(max: try rate.fraction())) }
        }
        if let rate = try reader.optional("minThroughput") {
            let value = try rate.double()
            guard value > 0, value.isFinite else { throw rate.error("must be greater than 0 (samples per second)") }
            bounds.append(.throughput(min: value))
        }
        guard bounds.count == 1, let bound = bounds.first else {
            throw reader.error(
                bounds.isEmpty
                    ? "needs a bound: \"percentile\" with \"max\", \"maxErrorRate\", or \"minThroughput\""
                    : "give one bound per threshold (percentile+max, maxErrorRate or minThroughput); split it into several thresholds")
        }
        var threshold = Threshold(metric: metric, bound: bound, path: reader.path)
        if let window = try reader.optional("window") { threshold.window = try window.positiveDuration() }
        if let samples = try reader.optional("samples") {
            guard case .percentile = bound else { throw samples.error("only means something with \"percentile\" (a latency bound)") }
            threshold.samples = Threshold.Samples(rawValue: try samples.oneOf(Threshold.Samples.allCases.map(\.rawValue)))!
        }
        if let abort = try reader.optional("abortOnFail") { threshold.abortOnFail = try abort.bool() }
        if let grace = try reader.optional("abortGrace") {
            guard threshold.abortOnFail else { throw grace.error("only means something with \"abortOnFail\": true") }
            threshold.abortGrace = try grace.duration()
        }
        return threshold
    }
}

extension MetricSamples {
    /// These samples as `threshold` judges them: for a percentile of successful samples, the latency is that of
    /// the successful ones, and so is the count that says whether there were any.
    func judged(by threshold: Threshold) -> MetricSamples {
        guard case .percentile = threshold.bound, threshold.samples == .successful else { return self }
        var judged = self
        judged.histogram = successes
        return judged
    }
}
