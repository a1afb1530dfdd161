/// Why shards cannot be merged, in one line that names the difference.
public struct MergeMismatch: Error, Sendable, Equatable, CustomStringConvertible {
    public var description: String

    init(_ description: String) { self.description = description }
}

/// Turns the results of a sharded run (`authload run --shard I/N`) into the result one generator running the
/// whole profile would have written.
///
/// Shards are added one at a time, so a merge holds one shard's result and the merged figures, never every
/// shard at once. Histograms add exactly: a merged percentile is the one a single histogram of every shard's
/// samples gives. Time-series rows line up on one interval grid (the shards' start instants, to the nearest
/// interval; exactly with a common `--start-at`), thresholds are judged again on the merged data, windows
/// included, and capacity stages are built from every shard's samples.
///
/// ```swift
/// var merger = ShardMerger()
/// for (path, result) in shards { try merger.add(result, from: path) }
/// let merged = try merger.merged(partial: false)
/// ```
public struct ShardMerger: Sendable {
    /// What every shard must share with the first one added.
    struct Reference: Sendable {
        var source: String
        var result: RunResult
        var plan: PlanRecord
        var count: Int
    }

    struct ErrorKey: Hashable, Sendable {
        var id: MetricID
        var kind: OutcomeKind
        var detail: String
    }

    private(set) var reference: Reference?
    /// Source of each shard added, by index.
    private(set) var sources: [Int: String] = [:]
    private(set) var series: [MetricSamples] = []
    private(set) var errors: [ErrorKey: Int] = [:]
    /// Rows keyed by their first interval on the merged grid, counted from the first shard's start.
    private(set) var rows: [Int: IntervalRow] = [:]
    /// The most intervals one row of ``rows`` covers, so an overlap is looked for only where it can be.
    private(set) var widestRow = 1
    /// The histograms rows kept (series a windowed latency threshold judges), by row and series, from every
    /// shard: added up once per row when the merge is built, not once per shard.
    private(set) var keptHistograms: [Int: [MetricID: [(all: String, failed: String?)]]] = [:]
    /// Per capacity stage, every series' samples; nil once a shard came without them.
    private(set) var stageSeries: [[MetricSamples]]?
    private(set) var shards: [ShardReport] = []
    /// Each shard's own interval offset and start, for the merged start, end and duration.
    private(set) var earliestStart = Double.infinity
    private(set) var latestEnd = -Double.infinity
    private(set) var startedAt: (epoch: Double, text: String)?
    private(set) var endedAt: (epoch: Double, text: String)?
    private(set) var notes: [(note: String, shards: [String])] = []
    private(set) var peaks: [PeakReading] = []
    private(set) var abortedThresholds: Set<String> = []
    private(set) var statuses: [RunStatus] = []
    /// Cores over every shard's machine.
    private(set) var cores = 0

    public init() {}

    /// Adds one shard's result.
    ///
    /// - Parameter source: where it came from (a directory), for messages.
    /// - Throws: ``MergeMismatch`` when it is no shard, a shard of another run, or a shard already added.
    public mutating func add(_ result: RunResult, from source: String) throws(MergeMismatch) {
        guard let text = result.environment.shard, let shard = Shard(text) else {
            throw MergeMismatch("\(source): not a shard of a sharded run (it was run without --shard or --shard-from-env)")
        }
        guard let plan = result.plan else {
            throw MergeMismatch(
                "\(source): its result.json has no plan record (written by an authload older than merge); run the shards again")
        }
        if let reference {
            try Self.check(result, plan: plan, shard: shard, from: source, against: reference)
        } else {
            // Its rows are merged like every shard's; the reference keeps the rest, not a second copy of them.
            var kept = result
            kept.timeseries = []
            reference = Reference(source: source, result: kept, plan: plan, count: shard.count)
            series = Array(repeating: MetricSamples(), count: result.metrics.count)
            stageSeries = result.capacity.map {
                Array(repeating: Array(repeating: MetricSamples(), count: result.metrics.count), count: $0.stages.count)
            }
        }
        if let other = sources[shard.index] {
            throw MergeMismatch("\(source) and \(other) are both shard \(shard): each index must run once")
        }
        sources[shard.index] = source
        try absorb(result, plan: plan, shard: shard, from: source)
    }

    private static func check(
        _ result: RunResult, plan: PlanRecord, shard: Shard, from source: String, against reference: Reference
    ) throws(MergeMismatch) {
        let first = reference.result
        let them = "\(reference.source)'s"
        func differ(_ what: String, _ mine: String, _ theirs: String) -> MergeMismatch {
            MergeMismatch("\(source): \(what) \(mine) differs from \(them) \(theirs): these are shards of different runs")
        }
        guard result.profileName == first.profileName else {
            throw differ("profile", "\"\(result.profileName)\"", "\"\(first.profileName)\"")
        }
        guard plan.profileDigest == reference.plan.profileDigest else {
            throw differ("profile file (digest", "\(plan.profileDigest))", "(\(reference.plan.profileDigest))")
        }
        guard plan.overrides == reference.plan.overrides else {
            let text = { (options: [String]) in options.isEmpty ? "(none)" : options.joined(separator: " ") }
            throw differ("command-line options", text(plan.overrides), text(reference.plan.overrides))
        }
        guard plan.seed == reference.plan.seed else { throw differ("seed", String(plan.seed), String(reference.plan.seed)) }
        guard result.environment.simulated == first.environment.simulated else {
            let kind = { (simulated: Bool?) in simulated == true ? "simulated" : "real" }
            throw differ("kind of run", kind(result.environment.simulated), kind(first.environment.simulated))
        }
        guard shard.count == reference.count else {
            throw differ("shard count", "\(shard.count) (shard \(shard))", "\(reference.count)")
        }
        guard result.intervalSeconds == first.intervalSeconds else {
            throw differ("metrics interval", "\(result.intervalSeconds) s", "\(first.intervalSeconds) s")
        }
        guard result.metrics.map(\.id) == first.metrics.map(\.id) else {
            throw differ(
                "series", result.metrics.map(\.id.description).joined(separator: ","),
                first.metrics.map(\.id.description).joined(separator: ","))
        }
        guard result.thresholds.map(\.name) == first.thresholds.map(\.name) else {
            throw differ(
                "thresholds", result.thresholds.map(\.name).joined(separator: "; "), first.thresholds.map(\.name).joined(separator: "; "))
        }
    }

    private mutating func absorb(_ result: RunResult, plan: PlanRecord, shard: Shard, from source: String) throws(MergeMismatch) {
        let reference = reference!
        let interval = result.intervalSeconds
        let offset = Int(((plan.startedAtEpochSeconds - reference.plan.startedAtEpochSeconds) / interval).rounded())
        do {
            for (position, summary) in result.metrics.enumerated() {
                var samples = try MetricSamples(
                    errors: summary.errors, histogram: summary.histogram, failedHistogram: summary.failedHistogram)
                samples.httpRequests = summary.httpRequests ?? 0
                samples.requestsByProtocol = summary.httpRequestsByProtocol ?? RequestsByProtocol()
                samples.httpResent = summary.httpResent ?? 0
                series[position].merge(samples)
            }
            if stageSeries != nil {
                if let stages = result.capacity?.stages, stages.count == stageSeries!.count,
                    stages.allSatisfy({ $0.series?.count == result.metrics.count })
                {
                    for (stage, result) in stages.enumerated() {
                        for (position, recorded) in result.series!.enumerated() {
                            stageSeries![stage][position].merge(try recorded.samples())
                        }
                    }
                } else {
                    stageSeries = nil
                }
            }
        } catch {
            throw MergeMismatch("\(source): a histogram in its result.json is damaged (\(error))")
        }
        for error in result.errors {
            errors[ErrorKey(id: error.id, kind: error.kind, detail: error.detail), default: 0] += error.count
        }
        for var row in result.timeseries {
            row.index += offset
            for position in row.metrics.indices {
                guard let histogram = row.metrics[position].histogram else { continue }
                keptHistograms[row.index, default: [:]][row.metrics[position].id, default: []].append(
                    (histogram, row.metrics[position].failedHistogram))
                row.metrics[position].histogram = nil
                row.metrics[position].failedHistogram = nil
            }
            place(row)
        }
        let start = Double(offset) * interval
        earliestStart = min(earliestStart, start)
        latestEnd = max(latestEnd, start + result.durationSeconds)
        if startedAt == nil || plan.startedAtEpochSeconds < startedAt!.epoch {
            startedAt = (plan.startedAtEpochSeconds, result.startedAt)
        }
        let endEpoch = plan.startedAtEpochSeconds + result.durationSeconds
        if endedAt == nil || endEpoch > endedAt!.epoch { endedAt = (endEpoch, result.endedAt) }
        for note in result.notes {
            if let at = notes.firstIndex(where: { $0.note == note }) {
                notes[at].shards.append(shard.description)
            } else {
                notes.append((note, [shard.description]))
            }
        }
        for peak in result.peaks {
            if let at = peaks.firstIndex(where: { $0.flow == peak.flow && $0.name == peak.name }) {
                peaks[at].peak += peak.peak
            } else {
                peaks.append(peak)
            }
        }
        abortedThresholds.formUnion(result.thresholds.filter(\.abortedRun).map(\.path))
        statuses.append(result.status)
        cores += result.environment.cores
        let flows = result.metrics.filter { $0.id.step == nil }
        shards.append(
            ShardReport(
                shard: shard.description, hostname: result.environment.hostname, status: result.status,
                flows: flows.reduce(0) { $0 + $1.count }, httpRequests: result.httpRequests,
                startLateSeconds: result.environment.startLateSeconds, intervalOffset: offset, generator: result.generator))
    }

    /// Puts a shard's row on the grid: onto the row of the same intervals, or, where rows of different spans
    /// overlap (shards whose long runs merged old rows differently), into one row covering them all.
    private mutating func place(_ row: IntervalRow) {
        if let existing = rows[row.index], existing.intervals == row.intervals {
            rows[row.index] = existing.adding(row)
            return
        }
        let overlapping = (row.index - widestRow + 1..<row.end).compactMap { rows[$0] }.filter { row.index < $0.end }
        guard !overlapping.isEmpty else {
            rows[row.index] = row
            widestRow = max(widestRow, row.intervals)
            return
        }
        var covering = row
        for other in overlapping {
            rows[other.index] = nil
            let start = min(covering.index, other.index)
            let end = max(covering.end, other.end)
            covering = covering.adding(other)
            covering.index = start
            covering.span = end - start
            covering.metrics = covering.metrics.map {
                var metric = $0
                metric.upperBound = true
                return metric
            }
        }
        rows[covering.index] = covering
        widestRow = max(widestRow, covering.intervals)
    }

    /// The merged run.
    ///
    /// - Parameter partial: merge even when shards are missing, saying which in the report's notes.
    /// - Throws: ``MergeMismatch`` when nothing was added, or shards are missing and `partial` is false.
    public func merged(partial: Bool) throws(MergeMismatch) -> RunResult {
        guard let reference else { throw MergeMismatch("no shards to merge") }
        let missing = (0..<reference.count).filter { sources[$0] == nil }.map { "\($0)/\(reference.count)" }
        if !missing.isEmpty && !partial {
            throw MergeMismatch(
                "\(Self.list(missing)) of \(reference.count) \(missing.count == 1 ? "is" : "are") missing "
                    + "(found \(sources.count)); give --partial to merge the shards there are")
        }
        return build(reference: reference, missing: missing)
    }

    static func list(_ shards: [String]) -> String {
        let names = shards.map { "shard \($0)" }
        guard names.count > 1 else { return names.first ?? "" }
        return names.dropLast().joined(separator: ", ") + " and " + names.last!
    }
}
