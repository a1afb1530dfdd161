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

    /// Empty samples whose histogram of every sample holds the slots of `window` (``Histogram/init(reserving:)``).
    init(reserving window: Range<Int>) {
        histogram = Histogram(reserving: window)
    }

    public var count: Int { histogram.totalCount }

    @inlinable
    public mutating func record(latencyMicros: Int, outcome: Outcome) {
        histogram.record(latencyMicros)
        if outcome.kind != .ok { recordFailure(latencyMicros: latencyMicros, outcome: outcome) }
    }

    /// What a failed sample adds besides its place in ``histogram``.
    @usableFromInline
    mutating func recordFailure(latencyMicros: Int, outcome: Outcome) {
        failures.record(latencyMicros)
        errors += 1
        errorCounts[outcome, default: 0] += 1
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
///
/// Latencies are held back in ``pending`` and added to their histograms a batch at a time (``flush()``): an interval's
/// histograms span tens of kilobytes each and get a few samples a second, so the slot a sample lands in is seldom in
/// the cache, and between two samples a simulation touches enough memory to evict it. One at a time, each sample
/// waited for its slot (1.5–2 % of a simulated soak's CPU); in a batch the processor fetches many slots at once.
/// Whoever reads ``metrics`` flushes first: ``ShardSlots`` does before an interval leaves it.
struct IntervalSamples: Sendable {
    private(set) var metrics: [MetricSamples?]
    /// Per series, the slots its histogram reserves once it records a first sample; none past the end.
    private var reserved: [Range<Int>]
    /// Latencies recorded whose histograms do not count them yet, with their series.
    private var pending: [(metric: Int, latencyMicros: Int)] = []
    /// How many latencies wait at most: a batch whose slots the processor can fetch together, in a few kilobytes.
    private static var batch: Int { 128 }

    /// - Parameter reserved: per series, the slots to reserve in its histogram when the first sample comes
    ///   (``slotsInUse``): a shard sizes each interval like the one before it, so recording seldom grows them.
    init(metricCount: Int, reserving reserved: [Range<Int>] = []) {
        metrics = Array(repeating: nil, count: metricCount)
        self.reserved = reserved
    }

    /// Per series, the slots its histogram holds; for a series with no samples, what it would have reserved, so
    /// that one seen now and then does not grow from nothing each time it comes back.
    var slotsInUse: [Range<Int>] {
        precondition(pending.isEmpty, "interval samples read before they were flushed")
        return metrics.indices.map { metrics[$0]?.histogram.reservedSlots ?? ($0 < reserved.count ? reserved[$0] : 0..<0) }
    }

    mutating func record(metric: Int, latencyMicros: Int, outcome: Outcome) {
        if metrics[metric] == nil { metrics[metric] = MetricSamples(reserving: metric < reserved.count ? reserved[metric] : 0..<0) }
        if outcome.kind != .ok { metrics[metric]!.recordFailure(latencyMicros: latencyMicros, outcome: outcome) }
        if pending.isEmpty { pending.reserveCapacity(Self.batch) }
        pending.append((metric, latencyMicros))
        if pending.count >= Self.batch { flush() }
    }

    /// Adds the latencies held back to their histograms: the order samples are added in changes nothing in a histogram.
    mutating func flush() {
        guard !pending.isEmpty else { return }
        metrics.withUnsafeMutableBufferPointer { metrics in
            for sample in pending { metrics[sample.metric]!.histogram.record(sample.latencyMicros) }
        }
        pending.removeAll(keepingCapacity: true)
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
        flush()
        var other = other
        other.flush()
        for (index, samples) in other.metrics.enumerated() {
            guard let samples else { continue }
            if metrics[index] == nil { metrics[index] = samples } else { metrics[index]!.merge(samples) }
        }
    }
}
