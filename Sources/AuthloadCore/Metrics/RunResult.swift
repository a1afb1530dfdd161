/// Everything a run measured, as written to `result.json` and read back by `authload report`.
///
/// Durations are in seconds (`Double`), latencies in microseconds (`Int`): the units of the CSVs.
public struct RunResult: Codable, Sendable, Equatable {
    public var schemaVersion: Int = 1
    public var profileName: String
    public var environment: RunEnvironment
    /// ISO-8601 UTC wall-clock times of the run's start and end.
    public var startedAt: String
    public var endedAt: String
    /// Length of the measured run (first arrival to last sample), seconds.
    public var durationSeconds: Double
    public var intervalSeconds: Double
    public var status: RunStatus
    /// One entry per flow and per flow step, in the order the profile declares them.
    public var metrics: [MetricSummary]
    /// One row per interval, oldest first.
    public var timeseries: [IntervalRow]
    public var errors: [ErrorCount]
    /// Things the reader must know to trust the numbers (e.g. late samples, TLS verification off).
    public var notes: [String]
    /// The profile's thresholds and how each came out; empty when the profile has none.
    public var thresholds: [ThresholdVerdict]
    /// The generator's own health: schedule lag, dropped arrivals, CPU; nil in results written before it was measured.
    public var generator: GeneratorReport?
    /// Per stage of a staged run: throughput, p50/p99, error rate, the last stage inside the SLO and the knee.
    public var capacity: CapacityReport?
    /// The peaks of the flows' gauges (e.g. concurrent Streem refreshes); empty when no flow keeps one.
    public var peaks: [PeakReading]
    /// What a merge checks shards against and judges thresholds again with; nil in results written before it.
    public var plan: PlanRecord?
    /// The shards a merged run was made of (`authload merge`); nil for a run of one generator.
    public var shards: [ShardReport]?

    public init(
        profileName: String, environment: RunEnvironment, startedAt: String, endedAt: String,
        durationSeconds: Double, intervalSeconds: Double, status: RunStatus,
        metrics: [MetricSummary], timeseries: [IntervalRow], errors: [ErrorCount], notes: [String] = [],
        thresholds: [ThresholdVerdict] = [], generator: GeneratorReport? = nil, capacity: CapacityReport? = nil,
        peaks: [PeakReading] = []
    ) {
        self.peaks = peaks
        self.profileName = profileName
        self.environment = environment
        self.startedAt = startedAt
        self.endedAt = endedAt
        self.durationSeconds = durationSeconds
        self.intervalSeconds = intervalSeconds
        self.status = status
        self.metrics = metrics
        self.timeseries = timeseries
        self.errors = errors
        self.notes = notes
        self.thresholds = thresholds
        self.generator = generator
        self.capacity = capacity
    }

    /// HTTP requests sent on the wire over all flows; nil in results written before they were counted.
    public var httpRequests: Int? {
        let flows = metrics.filter { $0.id.step == nil }
        guard flows.contains(where: { $0.httpRequests != nil }) else { return nil }
        return flows.reduce(0) { $0 + ($1.httpRequests ?? 0) }
    }

    /// HTTP requests over all flows by the version that carried their answer; nil in results written before they were.
    public var httpRequestsByProtocol: RequestsByProtocol? {
        let counts = metrics.filter { $0.id.step == nil }.compactMap(\.httpRequestsByProtocol)
        return counts.isEmpty ? nil : counts.reduce(RequestsByProtocol(), +)
    }

    /// Times requests of all flows were sent again because the server had not processed them (HTTP/2
    /// REFUSED_STREAM or GOAWAY); nil in results written before they were counted.
    public var httpResent: Int? {
        let counts = metrics.filter { $0.id.step == nil }.compactMap(\.httpResent)
        return counts.isEmpty ? nil : counts.reduce(0, +)
    }

    /// Every threshold held (true when there are none).
    public var thresholdsPassed: Bool { thresholds.allSatisfy(\.passed) }

    /// The generator kept its schedule (true when it was not measured).
    public var generatorKeptSchedule: Bool { generator?.keptSchedule ?? true }

    private enum CodingKeys: String, CodingKey {
        case schemaVersion, profileName, environment, startedAt, endedAt, durationSeconds, intervalSeconds, status
        case metrics, timeseries, errors, notes, thresholds, generator, capacity, peaks, plan, shards
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        schemaVersion = try c.decode(Int.self, forKey: .schemaVersion)
        profileName = try c.decode(String.self, forKey: .profileName)
        environment = try c.decode(RunEnvironment.self, forKey: .environment)
        startedAt = try c.decode(String.self, forKey: .startedAt)
        endedAt = try c.decode(String.self, forKey: .endedAt)
        durationSeconds = try c.decode(Double.self, forKey: .durationSeconds)
        intervalSeconds = try c.decode(Double.self, forKey: .intervalSeconds)
        status = try c.decode(RunStatus.self, forKey: .status)
        metrics = try c.decode([MetricSummary].self, forKey: .metrics)
        timeseries = try c.decode([IntervalRow].self, forKey: .timeseries)
        errors = try c.decode([ErrorCount].self, forKey: .errors)
        notes = try c.decode([String].self, forKey: .notes)
        // Added after the first release of schema 1: older results simply have none.
        thresholds = try c.decodeIfPresent([ThresholdVerdict].self, forKey: .thresholds) ?? []
        generator = try c.decodeIfPresent(GeneratorReport.self, forKey: .generator)
        capacity = try c.decodeIfPresent(CapacityReport.self, forKey: .capacity)
        peaks = try c.decodeIfPresent([PeakReading].self, forKey: .peaks) ?? []
        plan = try c.decodeIfPresent(PlanRecord.self, forKey: .plan)
        shards = try c.decodeIfPresent([ShardReport].self, forKey: .shards)
    }
}

public struct RunEnvironment: Codable, Sendable, Equatable {
    public var authloadVersion: String
    public var hostname: String
    public var cores: Int
    public var target: String
    /// `I/N` when this run was shard I of N (`--shard`); absent otherwise.
    public var shard: String?
    /// How far behind its common start (`--start-at`) this run began, seconds; absent without one.
    public var startLateSeconds: Double?
    /// True for a rehearsal on virtual time against the embedded services (`--simulate`); absent for a real run.
    /// Its figures describe a model of the service, not the service: `compare` will not set them beside a real run's.
    public var simulated: Bool?

    public init(authloadVersion: String, hostname: String, cores: Int, target: String, shard: String? = nil) {
        self.shard = shard
        self.authloadVersion = authloadVersion
        self.hostname = hostname
        self.cores = cores
        self.target = target
    }
}

public enum RunStatus: String, Codable, Sendable, Equatable {
    /// The run reached its planned end.
    case completed
    /// A signal stopped it early; the report is partial.
    case interrupted
    /// A threshold with `abortOnFail` failed and stopped it early; the report is partial.
    case aborted
    /// The run could not go on (e.g. the embedded server failed to start).
    case failed
    /// A checkpoint of a run that had not ended when it was written: what `authload report` finds after
    /// the process was killed.
    case running
}

/// Names one series: a whole flow (`step == nil`) or one step of it.
public struct MetricID: Codable, Sendable, Hashable, Comparable, CustomStringConvertible {
    public var flow: String
    public var step: String?

    public init(flow: String, step: String?) {
        self.flow = flow
        self.step = step
    }

    /// `login` for a flow, `login.logout` for a step of it.
    public var description: String { step.map { "\(flow).\($0)" } ?? flow }

    public static func < (a: MetricID, b: MetricID) -> Bool { a.description < b.description }
}

/// Cumulative figures of one series over the whole run.
public struct MetricSummary: Codable, Sendable, Equatable {
    public var id: MetricID
    public var count: Int
    public var errors: Int
    /// Latency of every sample, successful or not, as a serialized ``Histogram``.
    public var histogram: String
    public var minMicros: Int
    public var meanMicros: Double
    public var maxMicros: Int
    public var p50Micros: Int
    public var p90Micros: Int
    public var p95Micros: Int
    public var p99Micros: Int
    public var p999Micros: Int
    /// True for a series that times an observed event (``Flow/eventSteps``), not a request; absent otherwise.
    public var event: Bool?
    /// Latency of the successful samples alone and of the failed ones alone (Gatling's OK and KO), so an instant
    /// 503 neither hides in nor flatters the whole; absent in results written before they were kept apart.
    public var successful: LatencyFigures?
    public var failed: LatencyFigures?
    /// The failed samples' latencies as a serialized ``Histogram`` (the successful ones are ``histogram`` less
    /// these), so that runs merge exactly; absent when nothing failed.
    public var failedHistogram: String?
    /// A flow's series only: the HTTP requests its iterations sent on the wire (WebSocket upgrades, retries and
    /// each call of a composite step included), which is what the server's access log counts. Steps and events
    /// are samples, not requests; absent on steps and in results written before it was counted.
    public var httpRequests: Int?
    /// A flow's series only: of ``httpRequests``, those answered, by the version of HTTP that carried the answer;
    /// absent on steps and in results written before it was counted.
    public var httpRequestsByProtocol: RequestsByProtocol?
    /// A flow's series only: times its requests were sent again because the server had not processed them (an
    /// HTTP/2 stream refused with REFUSED_STREAM, or above the last stream of a GOAWAY). Not in ``httpRequests``:
    /// the server never acted on them. A request that failed in the end counts its resends too. Absent on steps and
    /// in results written before it was counted.
    public var httpResent: Int?

    /// Whether request totals leave this series out.
    public var isEvent: Bool { event == true }

    /// What the series is, in the words of the reports: `flow`, `step` (a request step) or `event`.
    public var seriesKind: String { id.step == nil ? "flow" : isEvent ? "event" : "step" }

    public init(
        id: MetricID, count: Int, errors: Int, histogram: String, minMicros: Int, meanMicros: Double,
        maxMicros: Int, p50Micros: Int, p90Micros: Int, p95Micros: Int, p99Micros: Int, p999Micros: Int,
        event: Bool = false, httpRequests: Int? = nil
    ) {
        self.event = event ? true : nil
        self.httpRequests = httpRequests
        self.id = id
        self.count = count
        self.errors = errors
        self.histogram = histogram
        self.minMicros = minMicros
        self.meanMicros = meanMicros
        self.maxMicros = maxMicros
        self.p50Micros = p50Micros
        self.p90Micros = p90Micros
        self.p95Micros = p95Micros
        self.p99Micros = p99Micros
        self.p999Micros = p999Micros
    }
}

/// Percentiles of one part of a series' samples (its successful or its failed ones), in microseconds.
public struct LatencyFigures: Codable, Sendable, Equatable {
    public var count: Int
    public var p50Micros: Int
    public var p90Micros: Int
    public var p95Micros: Int
    public var p99Micros: Int
    public var maxMicros: Int

    public init(_ histogram: Histogram) {
        count = histogram.totalCount
        p50Micros = histogram.value(atPercentile: 50)
        p90Micros = histogram.value(atPercentile: 90)
        p95Micros = histogram.value(atPercentile: 95)
        p99Micros = histogram.value(atPercentile: 99)
        maxMicros = histogram.max
    }
}

/// One interval of the time series.
public struct IntervalRow: Codable, Sendable, Equatable {
    /// Interval number from the start of the run, and its start in seconds.
    public var index: Int
    public var startSeconds: Double
    /// Virtual users alive at the end of the interval.
    public var activeUsers: Int
    /// Series that had samples starting in this interval.
    public var metrics: [IntervalMetric]
    /// Arrivals due in this interval that were dropped (open model); nil when nothing was due or woke in it.
    public var droppedArrivals: Int?
    /// The latest start or wake-up, against its due instant, of what was due in this interval.
    public var maxScheduleLagMicros: Int?
    /// How many intervals this row covers when older rows were merged to keep memory constant; nil for one.
    public var span: Int?

    /// How many intervals this row covers.
    public var intervals: Int { span ?? 1 }

    /// The number of the first interval after this row.
    public var end: Int { index + intervals }

    /// This row and the next one as one row of both spans: counts add up, active users take the peak, and
    /// percentiles are exact only for series that kept their histograms; the others take the higher of the
    /// two, an upper bound that ``IntervalMetric/upperBound`` says so to every report.
    public func merged(with next: IntervalRow) -> IntervalRow {
        var row = adding(next)
        row.span = intervals + next.intervals
        row.activeUsers = max(activeUsers, next.activeUsers)
        return row
    }

    /// This row and the same intervals of another shard as one row: counts and users add up, percentiles
    /// merge exactly where both kept histograms (else the higher, marked as an upper bound), the schedule lag
    /// is the worse of the two.
    func adding(_ other: IntervalRow) -> IntervalRow {
        var row = self
        row.activeUsers += other.activeUsers
        for metric in other.metrics {
            if let at = row.metrics.firstIndex(where: { $0.id == metric.id }) {
                row.metrics[at] = row.metrics[at].merged(with: metric)
            } else {
                row.metrics.append(metric)
            }
        }
        if droppedArrivals != nil || other.droppedArrivals != nil {
            row.droppedArrivals = (droppedArrivals ?? 0) + (other.droppedArrivals ?? 0)
        }
        if let lag = other.maxScheduleLagMicros { row.maxScheduleLagMicros = max(maxScheduleLagMicros ?? lag, lag) }
        return row
    }

    public init(index: Int, startSeconds: Double, activeUsers: Int, metrics: [IntervalMetric]) {
        self.index = index
        self.startSeconds = startSeconds
        self.activeUsers = activeUsers
        self.metrics = metrics
    }
}

public struct IntervalMetric: Codable, Sendable, Equatable {
    public var id: MetricID
    public var count: Int
    public var errors: Int
    public var p50Micros: Int
    public var p90Micros: Int
    public var p99Micros: Int
    public var maxMicros: Int
    /// The interval's latencies as a serialized ``Histogram``, kept for the series a windowed latency threshold
    /// judges, so that `authload merge` can judge those windows again exactly; absent for other series.
    public var histogram: String?
    /// The failed samples' latencies beside ``histogram``; absent when none failed.
    public var failedHistogram: String?
    /// True when the percentiles are the highest of several intervals' or shards' (an upper bound), not
    /// percentiles of this row's samples; absent when they are exact.
    public var upperBound: Bool?

    /// This metric and another of the same series as one: counts add up; percentiles are exact where both
    /// kept their histograms, else the higher of the two, marked ``upperBound``.
    func merged(with other: IntervalMetric) -> IntervalMetric {
        var merged = IntervalMetric(
            id: id, count: count + other.count, errors: errors + other.errors,
            p50Micros: max(p50Micros, other.p50Micros), p90Micros: max(p90Micros, other.p90Micros),
            p99Micros: max(p99Micros, other.p99Micros), maxMicros: max(maxMicros, other.maxMicros))
        if histogram != nil, other.histogram != nil, let mine = try? samples(), let theirs = try? other.samples() {
            var both = mine
            both.merge(theirs)
            merged = IntervalMetric(id: id, both)
            merged.upperBound = upperBound == true || other.upperBound == true ? true : nil
        } else {
            merged.upperBound = true
        }
        return merged
    }

    /// The figures of `samples`, keeping the histograms when `keepingHistograms`.
    public init(id: MetricID, _ samples: MetricSamples, keepingHistograms: Bool = true) {
        let h = samples.histogram
        let percentiles = h.values(atPercentiles: [50, 90, 99])
        self.init(
            id: id, count: samples.count, errors: samples.errors, p50Micros: percentiles[0], p90Micros: percentiles[1],
            p99Micros: percentiles[2], maxMicros: h.max)
        guard keepingHistograms else { return }
        histogram = h.serialized()
        if !samples.failures.isEmpty { failedHistogram = samples.failures.serialized() }
    }

    /// The samples behind this metric: latencies where the histogram was kept, else the count and errors alone.
    public func samples() throws -> MetricSamples {
        if let histogram { return try MetricSamples(errors: errors, histogram: histogram, failedHistogram: failedHistogram) }
        var samples = MetricSamples()
        // Counts without latencies: the count lives in the histogram, at no meaningful value.
        samples.histogram.record(1, count: count)
        samples.errors = errors
        return samples
    }

    public init(id: MetricID, count: Int, errors: Int, p50Micros: Int, p90Micros: Int, p99Micros: Int, maxMicros: Int) {
        self.id = id
        self.count = count
        self.errors = errors
        self.p50Micros = p50Micros
        self.p90Micros = p90Micros
        self.p99Micros = p99Micros
        self.maxMicros = maxMicros
    }
}

/// How many samples of one series ended in one kind of failure.
public struct ErrorCount: Codable, Sendable, Equatable {
    public var id: MetricID
    public var kind: OutcomeKind
    /// What distinguishes errors of one kind: an HTTP status, an error key, a socket error.
    public var detail: String
    public var count: Int

    public init(id: MetricID, kind: OutcomeKind, detail: String, count: Int) {
        self.id = id
        self.kind = kind
        self.detail = detail
        self.count = count
    }
}

/// The class of a step's or flow's result (DESIGN.md, "Outcomes").
public enum OutcomeKind: String, Codable, Sendable, Hashable, CaseIterable {
    case ok
    /// The server refused the credentials (e.g. FCSDK 401).
    case authFailure = "auth-failure"
    /// An unexpected HTTP status (e.g. 5xx).
    case httpError = "http-error"
    /// A well-formed response that breaks the flow's contract (no `sessionid`, rtCode ≠ 0).
    case protocolError = "protocol-error"
    case timeout
    /// Refused, reset, DNS, TLS: the request never got a response.
    case transportError = "transport-error"
    /// Stopped by the end of the run.
    case cancelled
}
