extension ShardMerger {
    /// The merged result of the shards added, `missing` naming those that were not.
    func build(reference: Reference, missing: [String]) -> RunResult {
        let first = reference.result
        let interval = first.intervalSeconds
        let catalog = Self.catalog(of: first.metrics)
        let shift = Int((earliestStart / interval).rounded())
        var series = TimeSeries()
        for key in rows.keys.sorted() {
            var row = exact(rows[key]!)
            row.index -= shift
            row.startSeconds = Double(row.index) * interval
            series.append(row)
        }
        let duration = latestEnd - earliestStart
        var notes = headline(reference: reference, missing: missing)
        if sources.count > 1, series.rows.contains(where: { $0.intervals == 1 && $0.metrics.contains { $0.upperBound == true } }) {
            notes.append(
                "Per-interval percentiles of the time series are the highest of the shards' (an upper bound, marked in "
                    + "timeseries.csv) except for series a windowed latency threshold judges, whose rows keep their histograms; "
                    + "counts and rates are exact.")
        }
        let thresholds = judge(first, catalog: catalog, rows: series.rows, duration: duration, notes: &notes)
        let capacity = capacity(first, catalog: catalog, thresholds: thresholds.evaluator, notes: &notes)
        var result = RunResult(
            profileName: first.profileName, environment: environment(first), startedAt: startedAt!.text, endedAt: endedAt!.text,
            durationSeconds: duration, intervalSeconds: interval, status: status, metrics: summaries(catalog: catalog),
            timeseries: series.rows, errors: errorCounts, notes: notes + shardNotes, thresholds: thresholds.verdicts,
            generator: generator(), capacity: capacity, peaks: peaks)
        result.plan = reference.plan
        result.plan?.startedAtEpochSeconds = startedAt!.epoch
        result.shards = orderedShards.map {
            var shard = $0
            shard.intervalOffset -= shift
            return shard
        }
        return result
    }

    /// `row` with the exact figures of the series whose histograms the shards kept: their percentiles are those
    /// of every shard's samples of the row's intervals, and the row keeps the merged histogram.
    private func exact(_ row: IntervalRow) -> IntervalRow {
        var row = row
        for position in row.metrics.indices {
            let id = row.metrics[position].id
            let kept = (row.index..<row.end).flatMap { keptHistograms[$0]?[id] ?? [] }
            guard !kept.isEmpty else { continue }
            var samples = MetricSamples()
            for (all, failed) in kept {
                // A damaged row histogram is left out of the percentiles; the row's count still holds its samples.
                if let histogram = try? Histogram(serialized: all) { samples.histogram.merge(histogram) }
                if let failed, let histogram = try? Histogram(serialized: failed) { samples.failures.merge(histogram) }
            }
            samples.errors = row.metrics[position].errors
            // Exact over the row's whole span, however many intervals or shards it covers.
            row.metrics[position] = IntervalMetric(id: id, samples)
        }
        return row
    }

    /// The shards by index, whatever order they were added in.
    private var orderedShards: [ShardReport] { shards.sorted { Shard($0.shard)!.index < Shard($1.shard)!.index } }

    /// What a reader of the merged report must know first: which shards, how they were lined up.
    private func headline(reference: Reference, missing: [String]) -> [String] {
        var notes = [
            "Merged from \(sources.count) of \(reference.count) shards (authload merge): every count and histogram is the sum of theirs."
        ]
        if !missing.isEmpty {
            notes.append(
                "Partial: \(Self.list(missing)) \(missing.count == 1 ? "is" : "are") missing; every figure covers the other shards only.")
        }
        if reference.plan.commonStartEpochSeconds == nil {
            notes.append("The shards had no common start (--start-at): their rows were lined up by start time to the nearest interval.")
        }
        return notes
    }

    /// The shards' own notes, each once, saying which shards it came from.
    private var shardNotes: [String] {
        notes.map { note, shards in shards.count == sources.count ? note : "Shard \(shards.joined(separator: ", ")): \(note)" }
    }

    /// The series of a result, numbered as the run numbered them: each flow, then its steps.
    static func catalog(of metrics: [MetricSummary]) -> MetricCatalog {
        var flows: [(name: String, steps: [String])] = []
        var events: [String: Set<String>] = [:]
        for summary in metrics {
            if let step = summary.id.step {
                flows[flows.count - 1].steps.append(step)
                if summary.isEvent { events[summary.id.flow, default: []].insert(step) }
            } else {
                flows.append((summary.id.flow, []))
            }
        }
        return MetricCatalog(flows: flows, events: events)
    }

    private func summaries(catalog: MetricCatalog) -> [MetricSummary] {
        series.enumerated().map { position, samples in
            Collector.summary(catalog.ids[position], samples, event: catalog.isEvent(position))
        }
    }

    private var errorCounts: [ErrorCount] {
        errors.map { ErrorCount(id: $0.key.id, kind: $0.key.kind, detail: $0.key.detail, count: $0.value) }
            .sorted { ($0.count, $1.id, $1.detail, $1.kind.rawValue) > ($1.count, $0.id, $0.detail, $0.kind.rawValue) }
    }

    /// The worst way a shard ended is how the merged run ended.
    private var status: RunStatus {
        let order: [RunStatus] = [.failed, .aborted, .interrupted, .running, .completed]
        return order.first(where: statuses.contains) ?? .completed
    }

    private func environment(_ first: RunResult) -> RunEnvironment {
        let hosts = Set(shards.map(\.hostname)).sorted()
        var environment = RunEnvironment(
            authloadVersion: first.environment.authloadVersion,
            hostname: hosts.count <= 4 ? hosts.joined(separator: ", ") : "\(hosts.count) hosts",
            cores: cores, target: first.environment.target)
        environment.startLateSeconds = shards.compactMap(\.startLateSeconds).max()
        // Shards of a simulation (`simulate --threads N`, or `--shard` under `--simulate`) merge into a simulation.
        environment.simulated = first.environment.simulated
        return environment
    }

    /// The thresholds judged again on the merged data: whole-run bounds on the merged histograms, windows on
    /// the merged rows, interval by interval.
    private func judge(
        _ first: RunResult, catalog: MetricCatalog, rows: [IntervalRow], duration: Double, notes: inout [String]
    ) -> (verdicts: [ThresholdVerdict], evaluator: ThresholdEvaluator) {
        let thresholds = first.thresholds.compactMap(\.threshold)
        guard let plan = reference?.plan, thresholds.count == first.thresholds.count,
            var evaluator = try? ThresholdEvaluator(
                thresholds: thresholds, catalog: catalog, interval: Duration(roundedSeconds: first.intervalSeconds),
                judgedFrom: Duration(roundedSeconds: plan.windowsFromSeconds),
                judgedUntil: Duration(roundedSeconds: plan.windowsUntilSeconds))
        else {
            if !first.thresholds.isEmpty {
                notes.append("The shards' thresholds could not be judged again (written by an older authload): they are left out.")
            }
            return ([], ThresholdEvaluator())
        }
        let none = [MetricSamples?](repeating: nil, count: catalog.count)
        let positions = Dictionary(uniqueKeysWithValues: catalog.ids.enumerated().map { ($1, $0) })
        var next = 0
        var coarse = false
        for row in rows {
            for index in next..<max(next, row.index) { evaluator.observe(index: index, samples: none) }
            var samples = none
            for metric in row.metrics {
                guard let position = positions[metric.id], let recorded = try? metric.samples() else { continue }
                samples[position] = recorded
            }
            evaluator.observe(index: row.index, samples: samples)
            for index in (row.index + 1)..<max(row.index + 1, row.end) { evaluator.observe(index: index, samples: none) }
            coarse = coarse || row.intervals > 1
            next = row.end
        }
        evaluator.settle(before: next)
        if coarse && thresholds.contains(where: { $0.window != nil }) {
            notes.append(
                "Windowed thresholds were judged on rows that cover several intervals (a run past \(TimeSeries.defaultMaxRows) intervals): their windows are approximate."
            )
        }
        var verdicts = evaluator.verdicts(cumulative: series, duration: Duration(roundedSeconds: duration), abortedBy: nil)
        for position in verdicts.indices where abortedThresholds.contains(verdicts[position].path) { verdicts[position].abortedRun = true }
        return (verdicts, evaluator)
    }

    private func capacity(_ first: RunResult, catalog: MetricCatalog, thresholds: ThresholdEvaluator, notes: inout [String])
        -> CapacityReport?
    {
        guard let capacity = first.capacity else { return nil }
        guard let stageSeries else {
            notes.append("A shard's result.json has no per-stage samples (an older authload): the capacity table is left out.")
            return nil
        }
        let stages = zip(capacity.stages, stageSeries).map { stage, samples in
            StageResult(
                number: stage.number, from: stage.from, target: stage.target, startSeconds: stage.startSeconds,
                endSeconds: stage.endSeconds, samples: samples, catalog: catalog, thresholds: thresholds)
        }
        return CapacityReport(unit: capacity.unit, stages: stages, judged: capacity.judged)
    }

    /// Every shard's generator health added up and judged as one, and beside the sum's problems each shard's
    /// own, and a late start: the worst shard decides exit 3.
    private func generator() -> GeneratorReport? {
        let reports = shards.compactMap(\.generator)
        guard let limits = reports.first else { return nil }
        var lag = Histogram()
        for report in reports { if let histogram = try? Histogram(serialized: report.lagHistogram) { lag.merge(histogram) } }
        let cpu = reports.compactMap(\.cpuSeconds)
        var merged = GeneratorReport(
            model: limits.model, started: reports.reduce(0) { $0 + $1.started },
            droppedAtCap: reports.reduce(0) { $0 + $1.droppedAtCap }, droppedLate: reports.reduce(0) { $0 + $1.droppedLate },
            droppedSaturated: reports.reduce(0) { $0 + $1.droppedSaturated },
            lagSamples: lag.totalCount, lagHistogram: lag.serialized(), lagP50Micros: lag.value(atPercentile: 50),
            lagP99Micros: lag.value(atPercentile: 99), lagMaxMicros: lag.max, cpuSeconds: cpu.isEmpty ? nil : cpu.reduce(0, +),
            maxLagP99Micros: limits.maxLagP99Micros, maxDroppedRate: limits.maxDroppedRate, dropAfterMicros: limits.dropAfterMicros)
        for shard in orderedShards {
            for problem in shard.generator?.problems ?? [] { merged.problems.append("shard \(shard.shard): \(problem)") }
            if let late = shard.startLateSeconds, late * 1e6 > Double(limits.maxLagP99Micros) {
                merged.problems.append(
                    "shard \(shard.shard) started \(ThresholdVerdict.fixed(late, 1)) s after the common start, more than generator.maxLagP99"
                )
            }
        }
        return merged
    }
}

extension ThresholdVerdict {
    /// The threshold this verdict judged, to judge it again (`authload merge`); nil for a percentile verdict of
    /// an older result, which did not record the percentile.
    var threshold: Threshold? {
        let rule: Threshold.Bound
        switch kind {
        case .percentile:
            guard let percentile else { return nil }
            rule = .percentile(percentile, max: .microseconds(Int64(bound.rounded())))
        case .errorRate: rule = .errorRate(max: bound)
        case .throughput: rule = .throughput(min: bound)
        }
        var threshold = Threshold(
            metric: metric, bound: rule, window: windowSeconds.map(Duration.init(roundedSeconds:)), path: path)
        threshold.samples = samples ?? .all
        return threshold
    }
}
