/// Where every sample lands: sharded, locked slots keyed by the interval in which the sample *started*.
///
/// Recording takes one short lock on the caller's shard (users are spread over shards by number), never
/// an actor hop. The collector swaps each shard's slots out under the lock and merges them outside it.
public final class MetricsRecorder: Sendable {
    public let interval: Duration
    public let metricCount: Int
    private let intervalMicros: Int64
    private let shards: [Locked<[Int: IntervalSamples]>]

    public init(metricCount: Int, interval: Duration, shardCount: Int = 16) {
        precondition(interval > .zero && shardCount > 0)
        self.interval = interval
        self.metricCount = metricCount
        self.intervalMicros = Swift.max(1, interval.microseconds)
        self.shards = (0..<shardCount).map { _ in Locked([:]) }
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
            // The `default:` subscript mutates the slot in place: no copy-on-write of the arrays.
            slots[intervalIndex, default: IntervalSamples(metricCount: metricCount)]
                .record(metric: metric, latencyMicros: latencyMicros, outcome: outcome)
        }
    }

    /// Counts one HTTP request sent on the wire for `metric` (a flow's series), in the interval it was sent in.
    public func countRequest(metric: Int, startOffset: Duration, shard: Int) {
        let intervalIndex = Int(Swift.max(0, startOffset.microseconds) / intervalMicros)
        let metricCount = self.metricCount
        shards[shard % shards.count].withLock { slots in
            slots[intervalIndex, default: IntervalSamples(metricCount: metricCount)].countRequest(metric: metric)
        }
    }

    /// Takes everything recorded so far, merged across shards, by interval.
    func drain() -> [Int: IntervalSamples] {
        var merged: [Int: IntervalSamples] = [:]
        for shard in shards {
            let taken = shard.withLock { slots in
                let taken = slots
                slots = [:]
                return taken
            }
            for (index, samples) in taken {
                if merged[index] == nil { merged[index] = samples } else { merged[index]!.merge(samples) }
            }
        }
        return merged
    }
}
