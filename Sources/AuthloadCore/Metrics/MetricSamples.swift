/// What one series gathered over some span: latencies of every sample, of the failed ones apart, and its
/// errors by kind.
public struct MetricSamples: Sendable {
    /// Latency of every sample, successful or not.
    public var histogram = Histogram()
    /// Latency of the failed samples only (Gatling's KO); what is left of ``histogram`` is the successful ones.
    public var failures = Histogram()
    public var errors = 0
    public var errorCounts: [Outcome: Int] = [:]
    /// HTTP requests sent on the wire (a flow's series only): every request, retry and WebSocket upgrade,
    /// whatever step, event or part of a step it served.
    public var httpRequests = 0
    /// Of those, the ones answered, by the version of HTTP that carried the answer.
    public var requestsByProtocol = RequestsByProtocol()
    /// Times those requests were sent again because the server had not processed them (HTTP/2 REFUSED_STREAM, or
    /// left out by a GOAWAY): not in ``httpRequests``, since the server never acted on them.
    public var httpResent = 0

    public init() {}

    /// Empty samples whose histogram of every sample reaches `slots` slots (``Histogram/init(reservingSlots:)``).
    init(reservingSlots slots: Int) {
        histogram = Histogram(reservingSlots: slots)
    }

    public var count: Int { histogram.totalCount }

    @inlinable
    public mutating func record(latencyMicros: Int, outcome: Outcome) {
        histogram.record(latencyMicros)
        if outcome.kind != .ok {
            failures.record(latencyMicros)
            errors += 1
            errorCounts[outcome, default: 0] += 1
        }
    }

    /// Latency of the successful samples only (Gatling's OK): an instant 503 does not pull it down.
    public var successes: Histogram {
        var successes = histogram
        successes.subtract(failures)
        return successes
    }

    public mutating func merge(_ other: MetricSamples) {
        histogram.merge(other.histogram)
        failures.merge(other.failures)
        errors += other.errors
        httpRequests += other.httpRequests
        requestsByProtocol = requestsByProtocol + other.requestsByProtocol
        httpResent += other.httpResent
        for (outcome, count) in other.errorCounts { errorCounts[outcome, default: 0] += count }
    }
}

/// Every series' samples that started in one interval.
struct IntervalSamples: Sendable {
    var metrics: [MetricSamples?]
    /// Per series, the slots its histogram reserves once it records a first sample; none past the end.
    private var reserved: [Int]

    /// - Parameter reserved: per series, how many slots to reserve in its histogram when the first sample comes
    ///   (``slotsInUse``): a shard sizes each interval like the one before it, so recording never grows them.
    init(metricCount: Int, reserving reserved: [Int] = []) {
        metrics = Array(repeating: nil, count: metricCount)
        self.reserved = reserved
    }

    /// Per series, how many slots its histogram reaches; for a series with no samples, what it would have reserved,
    /// so that one seen now and then does not grow from nothing each time it comes back.
    var slotsInUse: [Int] {
        metrics.indices.map { metrics[$0]?.histogram.reservedSlots ?? ($0 < reserved.count ? reserved[$0] : 0) }
    }

    mutating func record(metric: Int, latencyMicros: Int, outcome: Outcome) {
        if metrics[metric] == nil { metrics[metric] = MetricSamples(reservingSlots: metric < reserved.count ? reserved[metric] : 0) }
        metrics[metric]!.record(latencyMicros: latencyMicros, outcome: outcome)
    }

    mutating func countRequest(metric: Int, version: HTTPVersion? = nil, resent: Int = 0) {
        if metrics[metric] == nil { metrics[metric] = MetricSamples() }
        metrics[metric]!.httpRequests += 1
        metrics[metric]!.httpResent += resent
        if let version { metrics[metric]!.requestsByProtocol[version] += 1 }
    }

    mutating func countResent(_ resent: Int, metric: Int) {
        if metrics[metric] == nil { metrics[metric] = MetricSamples() }
        metrics[metric]!.httpResent += resent
    }

    mutating func merge(_ other: IntervalSamples) {
        for (index, samples) in other.metrics.enumerated() {
            guard let samples else { continue }
            if metrics[index] == nil { metrics[index] = samples } else { metrics[index]!.merge(samples) }
        }
    }
}
