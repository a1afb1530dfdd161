/// For a staged run: what each stage achieved, the last stage that met every threshold, and the knee.
///
/// Capacity planning asks where the service leaves its SLO. Each stage's flows (all flows pooled) give
/// its throughput, p50/p99 and error rate, and the profile's thresholds are judged on each stage alone.
/// The last stage inside the SLO is the one before the first stage that failed a threshold; the knee is
/// the first stage whose p99 is more than twice the first stage's, where latency starts to climb.
public struct CapacityReport: Codable, Sendable, Equatable {
    /// `users` (closed model) or `arrivals/s` (open model): the unit of the stages' targets.
    public var unit: String
    /// The stages longer than 0 s, in profile order.
    public var stages: [StageResult]
    /// Index into ``stages`` of the last stage inside the SLO; nil when the first failed or there are no thresholds.
    public var lastPassingStage: Int?
    /// Index into ``stages`` of the knee; nil when latency never climbed that far.
    public var kneeStage: Int?
    /// Whether the profile had thresholds to judge stages by.
    public var judged: Bool

    /// The knee's factor over the first stage's p99.
    public static let kneeFactor = 2

    public init(unit: String, stages: [StageResult], judged: Bool) {
        self.unit = unit
        self.stages = stages
        self.judged = judged
        if judged {
            let firstFailure = stages.firstIndex { !$0.passed } ?? stages.count
            lastPassingStage = firstFailure > 0 ? firstFailure - 1 : nil
        }
        if let base = stages.first(where: { $0.flows > 0 })?.p99Micros {
            kneeStage = stages.firstIndex { $0.flows > 0 && $0.p99Micros > Self.kneeFactor * base }
        }
    }
}

/// One stage of a staged run, as the capacity report shows it.
public struct StageResult: Codable, Sendable, Equatable {
    /// Its position in the profile's `load.stages`.
    public var number: Int
    /// The level it ramps from, and its target (users or arrivals per second).
    public var from: Double
    public var target: Double
    public var startSeconds: Double
    public var endSeconds: Double
    /// Flows that started in the stage, all flows pooled, and how many failed.
    public var flows: Int
    public var errors: Int
    /// Successful flows per second over the stage: what the service achieved, not what was offered.
    public var throughput: Double
    public var p50Micros: Int
    public var p99Micros: Int
    /// The names of the thresholds this stage failed, judged on its samples alone.
    public var failedThresholds: [String]
    /// Every series' samples that started in the stage, so that `authload merge` can build the stage from
    /// every shard's; nil in results written before they were kept.
    public var series: [SeriesSamples]?

    public init(
        number: Int, from: Double, target: Double, startSeconds: Double, endSeconds: Double, flows: Int, errors: Int,
        throughput: Double, p50Micros: Int, p99Micros: Int, failedThresholds: [String]
    ) {
        self.number = number
        self.from = from
        self.target = target
        self.startSeconds = startSeconds
        self.endSeconds = endSeconds
        self.flows = flows
        self.errors = errors
        self.throughput = throughput
        self.p50Micros = p50Micros
        self.p99Micros = p99Micros
        self.failedThresholds = failedThresholds
    }

    public var passed: Bool { failedThresholds.isEmpty }
    public var errorRate: Double { flows > 0 ? Double(errors) / Double(flows) : 0 }

    /// `800`, or `100→200` for a ramp.
    public var label: String {
        from == target
            ? ThresholdVerdict.fixed(target, target == target.rounded() ? 0 : 1)
            : ThresholdVerdict.fixed(from, from == from.rounded() ? 0 : 1) + "→"
                + ThresholdVerdict.fixed(target, target == target.rounded() ? 0 : 1)
    }
}

/// Gathers each stage's samples as the collector finalizes intervals.
struct StageAccumulator: Sendable {
    struct Span: Sendable {
        var number: Int
        var from: Double
        var target: Double
        var start: Duration
        var end: Duration
        var intervals: Range<Int>
    }

    let spans: [Span]
    let unit: String
    private var samples: [[MetricSamples]]

    init(plan: LoadPlan, interval: Duration, metricCount: Int) {
        var spans: [Span] = []
        var level = 0.0
        for (number, span) in LoadSchedule.spans(of: plan.stages).enumerated() {
            defer { level = span.stage.target }
            guard span.stage.duration > .zero else { continue }
            let first = Int(span.start.microseconds / interval.microseconds)
            let end = Int(span.end.microseconds / interval.microseconds)
            spans.append(
                Span(
                    number: number, from: level, target: span.stage.target, start: span.start, end: span.end,
                    intervals: first..<max(first, end)))
        }
        self.spans = spans
        self.unit = plan.model == .open ? "arrivals/s" : "users"
        self.samples = Array(repeating: Array(repeating: MetricSamples(), count: metricCount), count: spans.count)
    }

    var isEmpty: Bool { spans.isEmpty }

    mutating func observe(index: Int, samples metrics: [MetricSamples?]) {
        guard let stage = spans.firstIndex(where: { $0.intervals.contains(index) }) else { return }
        for (metric, series) in metrics.enumerated() {
            if let series { samples[stage][metric].merge(series) }
        }
    }

    func report(catalog: MetricCatalog, thresholds: ThresholdEvaluator) -> CapacityReport {
        let results = spans.enumerated().map { position, span in
            StageResult(
                number: span.number, from: span.from, target: span.target, startSeconds: span.start.seconds,
                endSeconds: span.end.seconds, samples: samples[position], catalog: catalog, thresholds: thresholds)
        }
        return CapacityReport(unit: unit, stages: results, judged: !thresholds.isEmpty)
    }
}

extension StageResult {
    /// A stage's figures from every series' samples that started in it (indexed as `catalog`): all flows
    /// pooled give its throughput and percentiles, and `thresholds` are judged on the stage alone.
    init(
        number: Int, from: Double, target: Double, startSeconds: Double, endSeconds: Double, samples: [MetricSamples],
        catalog: MetricCatalog, thresholds: ThresholdEvaluator
    ) {
        var flows = MetricSamples()
        for metric in catalog.ids.indices where !catalog.isStep(metric) { flows.merge(samples[metric]) }
        let seconds = endSeconds - startSeconds
        self.init(
            number: number, from: from, target: target, startSeconds: startSeconds, endSeconds: endSeconds,
            flows: flows.count, errors: flows.errors, throughput: seconds > 0 ? Double(flows.count - flows.errors) / seconds : 0,
            p50Micros: flows.histogram.value(atPercentile: 50), p99Micros: flows.histogram.value(atPercentile: 99),
            failedThresholds: thresholds.failures(in: samples, seconds: seconds).map(\.name))
        series = zip(catalog.ids, samples).map { SeriesSamples(id: $0, $1) }
    }
}
