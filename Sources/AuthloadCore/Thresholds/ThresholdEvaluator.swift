/// Judges a run's thresholds: sliding windows as intervals become complete, the whole run at the end.
///
/// Windows are judged only where the load is what the profile asked for: a window must start at or after
/// the end of the ramp-up and end at or before the planned end, so the ramp and the drain do not pass
/// for a throughput drop. A run shorter than a window is judged as one span instead.
///
/// Every sample reaches every window it belongs to, by the interval it started in: an interval's samples are
/// held ``PendingInterval`` (compactly) until no flow that started in it can still be running, including
/// samples that finish after the time series has closed the interval (``observeLate(index:samples:)``), and
/// only then enter the window that decides the verdict (``settle(before:)``). `abortOnFail` cannot wait that
/// long: it judges a second, early window fed as the time series closes each interval.
public struct ThresholdEvaluator: Sendable {
    private struct Entry: Sendable {
        let threshold: Threshold
        let metrics: [Int]
        /// Fed as intervals are settled: every sample included; decides ``worst``.
        var window: SlidingWindow?
        /// Fed as the time series closes intervals, before late samples have come: for `abortOnFail` only.
        var early: SlidingWindow?
        /// This entry's pooled samples of each interval not yet settled.
        var pending: [Int: PendingInterval] = [:]
        var worst: (value: Double, start: Int)?
        /// The value of the newest early window, for `abortOnFail`.
        var latest: Double?
        /// A deciding window has been judged: until then a windowed threshold is pending.
        var judgedWindow = false
    }

    /// One interval's pooled samples of one threshold, kept small while they wait to be settled.
    private struct PendingInterval: Sendable {
        var count = 0
        var errors = 0
        var histogram: String?

        mutating func add(_ samples: MetricSamples, keepsLatency: Bool) {
            count += samples.count
            errors += samples.errors
            guard keepsLatency, samples.count > 0 else { return }
            // Our own serialization of a histogram we merged: decoding cannot fail.
            var merged = histogram.flatMap { try? Histogram(serialized: $0) } ?? Histogram()
            merged.merge(samples.histogram)
            histogram = merged.serialized()
        }

        var samples: MetricSamples {
            var samples = MetricSamples()
            if let histogram, let decoded = try? Histogram(serialized: histogram) {
                samples.histogram = decoded
            } else {
                // Counts without latencies (a window that keeps none): the count lives in the histogram.
                samples.histogram.record(1, count: count)
            }
            samples.errors = errors
            return samples
        }
    }

    private var entries: [Entry]
    private let intervalSeconds: Double
    private let judged: Range<Int>

    /// An evaluator with no thresholds: every run passes.
    public init() {
        entries = []
        intervalSeconds = 1
        judged = 0..<0
    }

    /// Intervals before this one have entered the deciding windows.
    private var settled = 0

    /// - Parameters:
    ///   - judgedFrom: windows start at or after this offset (the end of the ramp-up).
    ///   - judgedUntil: windows end at or before this offset (the planned end).
    /// - Throws: a ``ProfileError`` naming `thresholds[i].metric` when a metric is no flow or step.
    public init(
        thresholds: [Threshold], catalog: MetricCatalog, interval: Duration,
        judgedFrom: Duration = .zero, judgedUntil: Duration
    ) throws(ProfileError) {
        intervalSeconds = interval.seconds
        let first = Int((judgedFrom.seconds / intervalSeconds).rounded(.up))
        let end = Int((judgedUntil.seconds / intervalSeconds + 1e-9).rounded(.down))
        judged = first..<max(first, end)
        var entries: [Entry] = []
        for threshold in thresholds {
            let metrics = try Self.resolve(threshold, catalog: catalog)
            var window: SlidingWindow?
            if let length = threshold.window {
                let intervals = Int((length.seconds / interval.seconds).rounded(.up))
                guard intervals >= 1, Double(intervals) * intervalSeconds - length.seconds < 1e-9 else {
                    throw ProfileError(
                        "\(threshold.path).window", "must be a whole number of metrics intervals (\(DurationText.format(interval)))")
                }
                if case .percentile = threshold.bound {
                    window = SlidingWindow(length: intervals, keepsLatency: true)
                } else {
                    window = SlidingWindow(length: intervals, keepsLatency: false)
                }
            }
            entries.append(Entry(threshold: threshold, metrics: metrics, window: window, early: threshold.abortOnFail ? window : nil))
        }
        self.entries = entries
    }

    /// The series a threshold's metric names; checks that it exists.
    public static func resolve(_ threshold: Threshold, catalog: MetricCatalog) throws(ProfileError) -> [Int] {
        if threshold.metric == Threshold.allSteps {
            return catalog.ids.indices.filter { catalog.isRequest($0) }
        }
        if let index = catalog.ids.firstIndex(where: { $0.description == threshold.metric }) { return [index] }
        let known = ([Threshold.allSteps] + catalog.ids.map(\.description)).joined(separator: ", ")
        throw ProfileError("\(threshold.path).metric", "\"\(threshold.metric)\" is no flow or step of this profile (known: \(known))")
    }

    public var isEmpty: Bool { entries.isEmpty }

    /// The series a windowed latency threshold judges: their time-series rows keep histograms, so that
    /// `authload merge` can judge those windows again on every shard's samples.
    var seriesJudgedInWindows: Set<Int> {
        Set(entries.filter { $0.window?.keepsLatency == true }.flatMap(\.metrics))
    }

    /// Feeds interval `index`, whose series hold `samples` (nil: no samples), as the time series closes it;
    /// intervals come in order. Samples finishing later come through ``observeLate(index:samples:)``.
    mutating func observe(index: Int, samples: [MetricSamples?]) {
        for position in entries.indices where entries[position].window != nil {
            let pooled = Self.pool(entries[position], samples)
            entries[position].pending[index, default: PendingInterval()].add(pooled, keepsLatency: entries[position].window!.keepsLatency)
            guard entries[position].early != nil else { continue }
            entries[position].early!.push(pooled)
            let early = entries[position].early!
            guard early.isFull, judged.contains(index - early.length + 1), judged.contains(index) else { continue }
            entries[position].latest = Self.value(
                of: entries[position].threshold.bound, count: early.count, errors: early.errors,
                histogram: early.histogram, seconds: Double(early.length) * intervalSeconds)
        }
    }

    /// Adds samples of interval `index` that finished after the time series closed it; they still reach every
    /// window holding the interval, as long as it is not yet settled.
    ///
    /// - Returns: false when the interval was settled already (the sample outlived the horizon the collector
    ///   was given; it then counts in the run's totals only).
    @discardableResult
    mutating func observeLate(index: Int, samples: [MetricSamples?]) -> Bool {
        guard index >= settled else { return false }
        for position in entries.indices where entries[position].window != nil {
            let pooled = Self.pool(entries[position], samples)
            guard pooled.count > 0 else { continue }
            entries[position].pending[index, default: PendingInterval()].add(pooled, keepsLatency: entries[position].window!.keepsLatency)
        }
        return true
    }

    /// Moves every interval before `end` into the deciding windows, in order, and judges each window they complete.
    mutating func settle(before end: Int) {
        guard end > settled else { return }
        for index in settled..<end {
            for position in entries.indices where entries[position].window != nil {
                let samples = entries[position].pending.removeValue(forKey: index)?.samples ?? MetricSamples()
                entries[position].window!.push(samples)
                let window = entries[position].window!
                let start = index - window.length + 1
                guard window.isFull, judged.contains(start), judged.contains(index) else { continue }
                entries[position].judgedWindow = true
                let value = Self.value(
                    of: entries[position].threshold.bound, count: window.count, errors: window.errors,
                    histogram: window.histogram, seconds: Double(window.length) * intervalSeconds)
                guard let value else { continue }
                if let worst = entries[position].worst, !Self.isWorse(value, than: worst.value, entries[position].threshold.bound) {
                    continue
                }
                entries[position].worst = (value, start)
            }
        }
        settled = end
    }

    /// The first `abortOnFail` threshold failing after its grace, given the run so far; nil when none.
    func abortingFailure(cumulative: [MetricSamples], elapsed: Duration) -> Threshold? {
        for entry in entries where entry.threshold.abortOnFail && elapsed >= entry.threshold.abortGrace {
            let value: Double?
            if entry.window != nil {
                value = entry.latest
            } else {
                // A whole-run throughput is only known at the end; latency and errors so far are telling.
                if case .throughput = entry.threshold.bound { continue }
                let pooled = Self.pool(entry, cumulative)
                value = Self.value(
                    of: entry.threshold.bound, count: pooled.count, errors: pooled.errors,
                    histogram: pooled.histogram, seconds: elapsed.seconds)
            }
            if let value, !Self.passes(value, entry.threshold.bound) { return entry.threshold }
        }
        return nil
    }

    /// Every threshold's verdict at the end of a run that lasted `duration`.
    func verdicts(cumulative: [MetricSamples], duration: Duration, abortedBy: Threshold?) -> [ThresholdVerdict] {
        entries.map { entry in
            let threshold = entry.threshold
            var measured: Double?
            var worstStart: Double?
            if let worst = entry.worst {
                measured = worst.value
                worstStart = Double(worst.start) * intervalSeconds
            } else if entry.window == nil || !judgedAnyWindow(entry) {
                let pooled = Self.pool(entry, cumulative)
                measured = Self.value(
                    of: threshold.bound, count: pooled.count, errors: pooled.errors,
                    histogram: pooled.histogram, seconds: max(duration.seconds, intervalSeconds))
            }
            var verdict = ThresholdVerdict(
                name: threshold.name, metric: threshold.metric, path: threshold.path, kind: Self.kind(threshold.bound),
                bound: Self.boundValue(threshold.bound), measured: measured, windowSeconds: threshold.window?.seconds,
                worstWindowStartSeconds: worstStart, passed: measured.map { Self.passes($0, threshold.bound) } ?? false,
                abortedRun: abortedBy == threshold)
            if case .percentile(let p, _) = threshold.bound {
                verdict.samples = threshold.samples
                verdict.percentile = p
            }
            return verdict
        }
    }

    /// Where each threshold stands, given its verdict so far (``verdicts(cumulative:duration:abortedBy:)``, in the
    /// same order): pending until it can be judged, then passing or failing; once the run has finished, the verdict.
    func states(of verdicts: [ThresholdVerdict], finished: Bool) -> [ThresholdState] {
        zip(entries, verdicts).map { entry, verdict in
            let judged: ThresholdState = verdict.passed ? .passing : .failing
            if finished { return judged }
            if judgedAnyWindow(entry) { return entry.judgedWindow ? judged : .pending }
            // A whole-run throughput divides by the whole run: before the end it only reads the ramp-up as too slow.
            if case .throughput = entry.threshold.bound { return .pending }
            return verdict.measured == nil ? .pending : judged
        }
    }

    /// The thresholds that `samples` (one span's, e.g. a stage's) fail, judged on that span alone as one whole.
    func failures(in samples: [MetricSamples], seconds: Double) -> [Threshold] {
        entries.compactMap { entry in
            let pooled = Self.pool(entry, samples)
            let value = Self.value(
                of: entry.threshold.bound, count: pooled.count, errors: pooled.errors,
                histogram: pooled.histogram, seconds: seconds)
            // A stage without samples cannot be inside the SLO.
            guard let value else { return entry.threshold }
            return Self.passes(value, entry.threshold.bound) ? nil : entry.threshold
        }
    }

    /// A window of this length fits in the judged span (else the run is judged as one span).
    private func judgedAnyWindow(_ entry: Entry) -> Bool {
        guard let window = entry.window else { return false }
        return judged.count >= window.length
    }

    private static func pool(_ entry: Entry, _ cumulative: [MetricSamples]) -> MetricSamples {
        var pooled = MetricSamples()
        for metric in entry.metrics { pooled.merge(cumulative[metric]) }
        return pooled.judged(by: entry.threshold)
    }

    private static func pool(_ entry: Entry, _ samples: [MetricSamples?]) -> MetricSamples {
        var pooled = MetricSamples()
        for metric in entry.metrics {
            if let series = samples[metric] { pooled.merge(series) }
        }
        return pooled.judged(by: entry.threshold)
    }

    /// The figure a bound judges, from samples already narrowed to those it judges (``MetricSamples/judged(by:)``); nil when it cannot be known (no samples for a percentile or a rate).
    private static func value(of bound: Threshold.Bound, count: Int, errors: Int, histogram: Histogram, seconds: Double) -> Double? {
        switch bound {
        case .percentile(let p, _): count > 0 ? Double(histogram.value(atPercentile: p)) : nil
        case .errorRate: count > 0 ? Double(errors) / Double(count) : nil
        case .throughput: seconds > 0 ? Double(count) / seconds : nil
        }
    }

    private static func passes(_ value: Double, _ bound: Threshold.Bound) -> Bool {
        switch bound {
        case .percentile(_, let max): value <= Double(max.microseconds)
        case .errorRate(let max): value <= max
        case .throughput(let min): value >= min
        }
    }

    private static func isWorse(_ a: Double, than b: Double, _ bound: Threshold.Bound) -> Bool {
        if case .throughput = bound { return a < b }
        return a > b
    }

    private static func kind(_ bound: Threshold.Bound) -> ThresholdVerdict.Kind {
        switch bound {
        case .percentile: .percentile
        case .errorRate: .errorRate
        case .throughput: .throughput
        }
    }

    private static func boundValue(_ bound: Threshold.Bound) -> Double {
        switch bound {
        case .percentile(_, let max): Double(max.microseconds)
        case .errorRate(let max): max
        case .throughput(let min): min
        }
    }
}
