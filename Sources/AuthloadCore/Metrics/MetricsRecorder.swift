/// Where every sample lands: sharded, locked slots keyed by the interval in which the sample *started*.
///
/// Recording takes one short lock on the caller's shard (users are spread over shards by number), never
/// an actor hop. The collector swaps each shard's slots out under the lock and merges them outside it.
public final class MetricsRecorder: Sendable {
    public let interval: Duration
    public let metricCount: Int
    private let intervalMicros: Int64
    private let shards: [Locked<ShardSlots>]

    public init(metricCount: Int, interval: Duration, shardCount: Int = 16) {
        precondition(interval > .zero && shardCount > 0)
        self.interval = interval
        self.metricCount = metricCount
        self.intervalMicros = Swift.max(1, interval.microseconds)
        self.shards = (0..<shardCount).map { _ in Locked(ShardSlots()) }
    }

    public var shardCount: Int { shards.count }

    /// Records one sample.
    ///
    /// - Parameters:
    ///   - startOffset: when the sample started, from the start of the run; decides its interval.
    ///   - shard: any number; the caller's user number keeps one user's samples on one shard.
    public func record(metric: Int, startOffset: Duration, latency: Duration, outcome: Outcome, shard: Int) {
        let intervalIndex = Int(Swift.max(0, startOffset.microseconds) / intervalMicros)
        let latencyMicros = Int(latency.microseconds)
        let metricCount = self.metricCount
        shards[shard % shards.count].withLock { slots in
            slots.update(intervalIndex, metricCount: metricCount) {
                $0.record(metric: metric, latencyMicros: latencyMicros, outcome: outcome)
            }
        }
    }

    /// Counts one HTTP request sent on the wire for `metric` (a flow's series), in the interval it was sent in.
    ///
    /// - Parameters:
    ///   - version: the version of HTTP that carried its answer; nil when no answer came.
    ///   - resent: how many times the transport sent it again because the server had not processed it.
    public func countRequest(metric: Int, startOffset: Duration, shard: Int, version: HTTPVersion? = nil, resent: Int = 0) {
        let intervalIndex = Int(Swift.max(0, startOffset.microseconds) / intervalMicros)
        let metricCount = self.metricCount
        shards[shard % shards.count].withLock { slots in
            slots.update(intervalIndex, metricCount: metricCount) {
                $0.countRequest(metric: metric, version: version, resent: resent)
            }
        }
    }

    /// Counts `resent` sends of a request that is not counted itself (the server refused it every time).
    public func countResent(_ resent: Int, metric: Int, startOffset: Duration, shard: Int) {
        let intervalIndex = Int(Swift.max(0, startOffset.microseconds) / intervalMicros)
        let metricCount = self.metricCount
        shards[shard % shards.count].withLock { slots in
            slots.update(intervalIndex, metricCount: metricCount) { $0.countResent(resent, metric: metric) }
        }
    }

    /// Takes everything recorded so far, merged across shards, by interval.
    func drain() -> [Int: IntervalSamples] {
        var merged: [Int: IntervalSamples] = [:]
        for shard in shards {
            let taken = shard.withLock { $0.take() }
            for (index, samples) in taken {
                if merged[index] == nil { merged[index] = samples } else { merged[index]!.merge(samples) }
            }
        }
        return merged
    }
}

/// One shard's samples by interval. The newest interval is kept apart from the table: nearly every sample lands
/// there, and a table look-up (a hash, a probe, a modify in place) cost each sample more than its histogram did.
struct ShardSlots {
    init(reserved: [Range<Int>] = []) { self.reserved = reserved }

    /// The newest interval a sample has landed in since the last ``take()``, if any.
    private var latestIndex: Int?
    private var latest = IntervalSamples(metricCount: 0)
    /// Older intervals: samples of flows and steps that started before the newest one and finish now.
    private var earlier: [Int: IntervalSamples] = [:]
    /// Per series, the slots its histogram held in the newest interval before this one: a new interval's histograms
    /// reserve the same, so recording seldom grows them (copying the counts each time a sample fell outside). It
    /// outlives ``take()``, which the collector calls every interval.
    private(set) var reserved: [Range<Int>] = []

    /// Runs `body` on the samples of interval `index`, made empty if it has none yet.
    @inline(__always)
    mutating func update(_ index: Int, metricCount: Int, _ body: (inout IntervalSamples) -> Void) {
        if index == latestIndex {
            body(&latest)
        } else if latestIndex.map({ index > $0 }) ?? true {
            // A newer interval: the current one joins the older ones. An older one never takes its place, so samples
            // finishing late do not swap the two back and forth.
            if let latestIndex {
                latest.flush()
                reserved = latest.slotsInUse
                earlier[latestIndex] = latest
            }
            latest = earlier.removeValue(forKey: index) ?? IntervalSamples(metricCount: metricCount, reserving: reserved)
            latestIndex = index
            body(&latest)
        } else {
            body(&earlier[index, default: IntervalSamples(metricCount: metricCount)])
        }
    }

    /// Everything recorded so far, by interval; leaves the shard empty.
    mutating func take() -> [Int: IntervalSamples] {
        var taken = earlier
        // Emptied first, so that flushing in place copies none of the histograms.
        earlier = [:]
        var position = taken.values.startIndex
        while position != taken.values.endIndex {
            taken.values[position].flush()
            taken.values.formIndex(after: &position)
        }
        if let latestIndex {
            latest.flush()
            taken[latestIndex] = latest
            reserved = latest.slotsInUse
        }
        self = ShardSlots(reserved: reserved)
        return taken
    }
}
