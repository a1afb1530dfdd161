/// Turns the recorder's raw samples into the time series and the run's cumulative figures.
///
/// Each tick drains the recorder. Cumulative figures take every sample at once; an interval's row is
/// finalized only `lag` intervals after it ends, because a sample is keyed by its start and may finish
/// up to a step timeout later. Samples arriving after that still count in the totals (``LateSamples``),
/// in the capacity stage they started in, and in every threshold window holding their interval: windows
/// are settled only `horizon` intervals after an interval ends, once no flow that started in it can still
/// be running.
public final class Collector: Sendable {
    private struct State {
        var window: [Int: IntervalSamples] = [:]
        var activeUsers: [Int: Int] = [:]
        var series: TimeSeries
        /// Active users of the last final interval, for one that saw no count of its own.
        var lastActiveUsers = 0
        var cumulative: [MetricSamples]
        var firstOpen = 0
        /// Per series (by catalog index), samples that finished after their interval's row was final.
        var late: [Int: Int] = [:]
        var live = LiveStats()
        var thresholds: ThresholdEvaluator
        var abortedBy: Threshold?
        /// Whether anything succeeds, for the verdict that stops a run against a target that does not answer.
        var reachability: Reachability
        var unreachable: UnreachableVerdict?
        var stages: StageAccumulator?
        var generator: [Int: IntervalHealth] = [:]
        /// Every interval's generator figures so far, added up (the worst lag, all drops).
        var generatorTotals = IntervalHealth()
        /// ``finish(lastInterval:activeUsers:duration:)`` has judged the thresholds: live states are the verdicts.
        var finished = false
    }

    public let catalog: MetricCatalog
    private let recorder: MetricsRecorder
    private let lag: Int
    private let horizon: Int
    private let health: GeneratorHealth?
    /// Series whose rows keep their histograms (``ThresholdEvaluator/seriesJudgedInWindows``).
    private let keptHistograms: Set<Int>
    private let state: Locked<State>

    /// - Parameters:
    ///   - lag: intervals to wait before finalizing one (at least the step timeout in intervals).
    ///   - horizon: intervals to wait before a threshold window takes an interval as complete (the flow timeout
    ///     in intervals, plus one); at least `lag`.
    ///   - thresholds: judges the run as intervals are finalized; none by default.
    ///   - load: with stages, each stage's samples are gathered for the capacity report.
    ///   - health: the generator's per-interval lag and drops, for the time series.
    ///   - unreachableAfter: stop judging the target reachable after this long without a successful request step
    ///     while connections fail (``Reachability``); nil: never.
    ///   - maxRows: the most time-series rows kept (``TimeSeries``); past it older rows are merged, so memory
    ///     stays constant however long the run. Checkpoints save rows at full resolution and then let the
    ///     collector forget them (``forgetRows(before:)``).
    public init(
        catalog: MetricCatalog, recorder: MetricsRecorder, lag: Int, horizon: Int? = nil, thresholds: ThresholdEvaluator? = nil,
        load: LoadPlan? = nil, health: GeneratorHealth? = nil, unreachableAfter: Duration? = nil,
        maxRows: Int = TimeSeries.defaultMaxRows
    ) {
        self.catalog = catalog
        self.health = health
        self.recorder = recorder
        self.lag = max(1, lag)
        self.horizon = max(self.lag, horizon ?? lag)
        keptHistograms = thresholds?.seriesJudgedInWindows ?? []
        let stages = load.map { StageAccumulator(plan: $0, interval: recorder.interval, metricCount: catalog.count) }
        self.state = Locked(
            State(
                series: TimeSeries(maxRows: maxRows),
                cumulative: Array(repeating: MetricSamples(), count: catalog.count),
                thresholds: thresholds ?? ThresholdEvaluator(), reachability: Reachability(limit: unreachableAfter),
                stages: stages?.isEmpty == false ? stages : nil))
    }

    /// Drains the recorder after interval `completed − 1` has ended.
    public func tick(completed: Int, activeUsers: Int) {
        let drained = recorder.drain()
        let generator = health?.drainIntervals() ?? [:]
        let intervalSeconds = recorder.interval.seconds
        let catalog = self.catalog
        let lag = self.lag
        let horizon = self.horizon
        state.withLock { state in
            state.activeUsers[completed - 1] = activeUsers
            Self.absorb(generator, into: &state)
            var tickSteps = MetricSamples()
            Self.absorb(drained, into: &state, catalog: catalog, tickSteps: &tickSteps)
            state.live = LiveStats(
                elapsed: recorder.interval * completed,
                activeUsers: activeUsers,
                requestsPerSecond: Double(tickSteps.httpRequests) / intervalSeconds,
                errorsPerSecond: Double(tickSteps.errors) / intervalSeconds,
                p95Micros: tickSteps.histogram.value(atPercentile: 95),
                totalRequests: state.live.totalRequests + tickSteps.httpRequests,
                totalErrors: state.live.totalErrors + tickSteps.errors,
                totalAttempts: state.live.totalAttempts + tickSteps.count
            )
            let elapsed = recorder.interval * completed
            state.reachability.observe(successes: tickSteps.count - tickSteps.errors, failures: tickSteps.errorCounts, at: elapsed)
            if state.unreachable == nil { state.unreachable = state.reachability.verdict(at: elapsed) }
            Self.finalize(upTo: completed - lag, state: &state, catalog: catalog, interval: intervalSeconds, keeping: keptHistograms)
            state.thresholds.settle(before: completed - horizon)
            if state.abortedBy == nil {
                state.abortedBy = state.thresholds.abortingFailure(cumulative: state.cumulative, elapsed: recorder.interval * completed)
            }
        }
    }

    /// The run's figures so far, for live metrics; nothing is finalized or drained by asking.
    public func liveSnapshot() -> LiveSnapshot {
        let catalog = self.catalog
        return state.withLock { state in
            let verdicts = state.thresholds.verdicts(cumulative: state.cumulative, duration: state.live.elapsed, abortedBy: state.abortedBy)
            return LiveSnapshot(
                ids: catalog.ids, events: catalog.ids.indices.map(catalog.isEvent), series: state.cumulative,
                activeUsers: state.live.activeUsers, thresholds: verdicts,
                thresholdStates: state.thresholds.states(of: verdicts, finished: state.finished),
                droppedArrivals: state.generatorTotals.dropped, maxScheduleLagMicros: state.generatorTotals.maxLagMicros,
                elapsed: state.live.elapsed)
        }
    }

    /// The `abortOnFail` threshold that failed, once one has; the runner then stops the run.
    public var abortingThreshold: Threshold? { state.withLock { $0.abortedBy } }

    /// Set once nothing has succeeded for `unreachableAfter` while connections to the target failed; the runner then
    /// stops the run.
    public var unreachable: UnreachableVerdict? { state.withLock { $0.unreachable } }

    /// The figures of the last tick, for the progress line.
    public var live: LiveStats { state.withLock { $0.live } }

    /// What has been measured so far, without finalizing anything: the cumulative figures of every sample
    /// drained up to the last tick, and the final intervals numbered `firstRow` on. A checkpoint saves it
    /// while the run goes on; asking only for the rows it has not saved keeps its cost the same however
    /// long the run has lasted.
    public func snapshot(duration: Duration, rowsFrom firstRow: Int = 0) -> MeasuredRun {
        let catalog = self.catalog
        let lateWait = self.lateWait
        return state.withLock { state in
            var measured = Self.measured(state, catalog: catalog, duration: duration, capacity: nil, lateWait: lateWait)
            // Rows are in index order: the new ones are a suffix.
            let rows = state.series.rows
            measured.timeseries = Array(rows.suffix(rows.reversed().prefix { $0.index >= firstRow }.count))
            return measured
        }
    }

    /// Lets go of the rows that end before interval `index`, once a checkpoint has saved them: the rows kept
    /// in memory are then only those of the last few seconds, and the final report reads the rest back from
    /// disk. ``snapshot(duration:rowsFrom:)`` and ``finish(lastInterval:activeUsers:duration:)`` no longer
    /// return them; every cumulative figure, threshold and stage still counts their samples.
    public func forgetRows(before index: Int) {
        state.withLock { $0.series.removeRows(before: index) }
    }

    /// Drains what is left, finalizes every interval up to `lastInterval` and judges the thresholds.
    ///
    /// The time series holds the rows not forgotten (``forgetRows(before:)``).
    ///
    /// - Parameter duration: how long the run lasted, for whole-run throughput; by default up to the
    ///   end of `lastInterval`.
    public func finish(lastInterval: Int, activeUsers: Int, duration: Duration? = nil) -> MeasuredRun {
        let duration = duration ?? recorder.interval * (lastInterval + 1)
        let drained = recorder.drain()
        let generator = health?.drainIntervals() ?? [:]
        let catalog = self.catalog
        let intervalSeconds = recorder.interval.seconds
        let lateWait = self.lateWait
        return state.withLock { state in
            Self.absorb(generator, into: &state)
            var ignored = MetricSamples()
            Self.absorb(drained, into: &state, catalog: catalog, tickSteps: &ignored)
            if state.activeUsers[lastInterval] == nil { state.activeUsers[lastInterval] = activeUsers }
            let last = max(lastInterval, state.window.keys.max() ?? 0)
            Self.finalize(upTo: last + 1, state: &state, catalog: catalog, interval: intervalSeconds, keeping: keptHistograms)
            state.thresholds.settle(before: last + 1)
            state.finished = true
            return Self.measured(
                state, catalog: catalog, duration: duration,
                capacity: state.stages?.report(catalog: catalog, thresholds: state.thresholds), lateWait: lateWait)
        }
    }

    /// How long after an interval ends its row is final: samples finishing later are late.
    private var lateWait: Duration { recorder.interval * lag }

    private static func measured(
        _ state: State, catalog: MetricCatalog, duration: Duration, capacity: CapacityReport?,
        lateWait: Duration
    ) -> MeasuredRun {
        MeasuredRun(
            metrics: state.cumulative.enumerated().map { summary(catalog.ids[$0.offset], $0.element, event: catalog.isEvent($0.offset)) },
            timeseries: state.series.rows,
            errors: errorCounts(state.cumulative, catalog: catalog),
            late: LateSamples(
                wait: lateWait,
                bySeries: state.late.map { (catalog.ids[$0.key], $0.value) }.sorted { ($0.1, $1.0) > ($1.1, $0.0) }),
            thresholds: state.thresholds.verdicts(cumulative: state.cumulative, duration: duration, abortedBy: state.abortedBy),
            capacity: capacity
        )
    }

    private static func absorb(
        _ drained: [Int: IntervalSamples], into state: inout State,
        catalog: MetricCatalog, tickSteps: inout MetricSamples
    ) {
        for (index, samples) in drained {
            for (metric, series) in samples.metrics.enumerated() {
                guard let series else { continue }
                state.cumulative[metric].merge(series)
                if catalog.isRequest(metric) { tickSteps.merge(series) }
                if !catalog.isStep(metric) { tickSteps.httpRequests += series.httpRequests }
                if index < state.firstOpen { state.late[metric, default: 0] += series.count }
            }
            if index >= state.firstOpen {
                state.window[index, default: IntervalSamples(metricCount: catalog.count)].merge(samples)
            } else {
                // Closed in the time series, but not in the windows and stages it belongs to.
                state.thresholds.observeLate(index: index, samples: samples.metrics)
                state.stages?.observe(index: index, samples: samples.metrics)
            }
        }
    }

    /// Keeps the generator's figures of intervals not yet final; later ones count only in the run's totals.
    private static func absorb(_ generator: [Int: IntervalHealth], into state: inout State) {
        for health in generator.values { state.generatorTotals.merge(health) }
        for (index, health) in generator where index >= state.firstOpen {
            state.generator[index, default: IntervalHealth()].merge(health)
        }
    }

    private static func finalize(
        upTo end: Int, state: inout State, catalog: MetricCatalog, interval: Double, keeping keptHistograms: Set<Int>
    ) {
        guard end > state.firstOpen else { return }
        for index in state.firstOpen..<end {
            let samples = state.window.removeValue(forKey: index)
            state.thresholds.observe(index: index, samples: samples?.metrics ?? Array(repeating: nil, count: catalog.count))
            if let metrics = samples?.metrics { state.stages?.observe(index: index, samples: metrics) }
            var metrics: [IntervalMetric] = []
            for (metric, series) in (samples?.metrics ?? []).enumerated() {
                guard let series, series.count > 0 else { continue }
                metrics.append(IntervalMetric(id: catalog.ids[metric], series, keepingHistograms: keptHistograms.contains(metric)))
            }
            let active = state.activeUsers.removeValue(forKey: index) ?? state.lastActiveUsers
            state.lastActiveUsers = active
            var row = IntervalRow(index: index, startSeconds: Double(index) * interval, activeUsers: active, metrics: metrics)
            if let generator = state.generator.removeValue(forKey: index) {
                row.droppedArrivals = generator.dropped
                row.maxScheduleLagMicros = generator.maxLagMicros
            }
            state.series.append(row)
        }
        state.firstOpen = end
    }

    static func summary(_ id: MetricID, _ series: MetricSamples, event: Bool = false) -> MetricSummary {
        let h = series.histogram
        var summary = MetricSummary(
            id: id, count: series.count, errors: series.errors, histogram: h.serialized(),
            minMicros: h.min, meanMicros: h.mean, maxMicros: h.max,
            p50Micros: h.value(atPercentile: 50), p90Micros: h.value(atPercentile: 90),
            p95Micros: h.value(atPercentile: 95), p99Micros: h.value(atPercentile: 99),
            p999Micros: h.value(atPercentile: 99.9), event: event, httpRequests: id.step == nil ? series.httpRequests : nil)
        if id.step == nil {
            summary.httpRequestsByProtocol = series.requestsByProtocol
            summary.httpResent = series.httpResent
        }
        summary.successful = LatencyFigures(series.successes)
        summary.failed = LatencyFigures(series.failures)
        if !series.failures.isEmpty { summary.failedHistogram = series.failures.serialized() }
        return summary
    }

    static func errorCounts(_ cumulative: [MetricSamples], catalog: MetricCatalog) -> [ErrorCount] {
        var errors: [ErrorCount] = []
        for (metric, series) in cumulative.enumerated() {
            for (outcome, count) in series.errorCounts {
                errors.append(ErrorCount(id: catalog.ids[metric], kind: outcome.kind, detail: outcome.detail, count: count))
            }
        }
        return errors.sorted { ($0.count, $1.id, $1.detail) > ($1.count, $0.id, $0.detail) }
    }
}

/// What a run measured, before the CLI adds names, times and the environment.
public struct MeasuredRun: Sendable {
    public var metrics: [MetricSummary]
    public var timeseries: [IntervalRow]
    public var errors: [ErrorCount]
    /// Samples that finished after their interval's row was final; they are in the totals only.
    public var late: LateSamples
    public var thresholds: [ThresholdVerdict]
    /// Per stage, for a staged run; nil otherwise.
    public var capacity: CapacityReport?
}

/// Samples that finished after the time series stopped waiting for their interval: they count in the run's
/// totals and percentiles, in threshold windows and capacity stages, but not in the rows of the time series. Flows that hold a session for longer than
/// the wait (a Streem `hold`) land here by design.
public struct LateSamples: Sendable {
    /// How long after an interval ends its row waits for samples that started in it.
    public var wait: Duration
    /// The series with late samples and how many, most first.
    public var bySeries: [(MetricID, Int)]

    public var total: Int { bySeries.reduce(0) { $0 + $1.1 } }
}

/// The live figures of the last interval, for the terminal.
public struct LiveStats: Sendable, Equatable {
    public var elapsed: Duration = .zero
    public var activeUsers = 0
    /// HTTP requests sent on the wire per second, over the last interval.
    public var requestsPerSecond = 0.0
    /// Failed request steps per second.
    public var errorsPerSecond = 0.0
    public var p95Micros = 0
    public var totalRequests = 0
    /// Failed request steps so far.
    public var totalErrors = 0
    /// Request steps attempted so far, failed or not: what ``totalErrors`` is a share of. A step that could not
    /// connect sent no HTTP request, so errors as a share of requests read 0 % against a closed port.
    public var totalAttempts = 0
}
