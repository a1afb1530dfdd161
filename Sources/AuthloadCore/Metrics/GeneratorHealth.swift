/// How late the generator started what it scheduled, and what it could not start at all.
///
/// Schedule lag is the actual start of an arrival (open model) or of a user's wake-up (closed model: ramp
/// start, end of think time) minus its intended instant. It is recorded into a few locked shards — never
/// through an actor — so it costs what a latency sample costs.
public final class GeneratorHealth: Sendable {
    private struct Shard {
        var lag = Histogram()
        var started = 0
        var droppedAtCap = 0
        var droppedLate = 0
        var droppedSaturated = 0
        /// Per interval in which things were due, until the collector takes them for the time series.
        var intervals: [Int: IntervalHealth] = [:]
    }

    private let shards: [Locked<Shard>]
    private let intervalMicros: Int64

    /// - Parameter interval: the time series' interval, for the per-interval figures.
    public init(interval: Duration = .seconds(1), shardCount: Int = 8) {
        shards = (0..<max(1, shardCount)).map { _ in Locked(Shard()) }
        intervalMicros = max(1, interval.microseconds)
    }

    /// Records something due at `due` (from the start of the run) that started `lag` late.
    public func started(lag: Duration, due: Duration, shard: Int) {
        let micros = Int(max(0, lag.microseconds))
        let index = self.index(due)
        shards[shard % shards.count].withLock { shard in
            shard.lag.record(micros)
            shard.started += 1
            shard.intervals[index, default: IntervalHealth()].lagged(micros)
        }
    }

    /// Records a wake-up that was `lag` late (closed model): lag only, nothing dropped or started.
    public func woke(lag: Duration, due: Duration, shard: Int) {
        let micros = Int(max(0, lag.microseconds))
        let index = self.index(due)
        shards[shard % shards.count].withLock { shard in
            shard.lag.record(micros)
            shard.intervals[index, default: IntervalHealth()].lagged(micros)
        }
    }

    /// Why an arrival was not started.
    public enum DropReason: Sendable {
        /// `maxUsers` users were alive.
        case atCap
        /// The generator got to it more than `generator.dropAfter` late.
        case late
        /// The thread that would carry it had no idle time (``Transport/isSaturated(forUser:)``).
        case saturated
    }

    /// Records an arrival that was not started, and why.
    public func dropped(lag: Duration, due: Duration, because reason: DropReason) {
        let micros = Int(max(0, lag.microseconds))
        let index = self.index(due)
        shards[0].withLock { shard in
            shard.lag.record(micros)
            switch reason {
            case .atCap: shard.droppedAtCap += 1
            case .late: shard.droppedLate += 1
            case .saturated: shard.droppedSaturated += 1
            }
            shard.intervals[index, default: IntervalHealth()].lagged(micros)
            shard.intervals[index, default: IntervalHealth()].dropped += 1
        }
    }

    /// Takes the per-interval figures gathered so far, merged across shards.
    func drainIntervals() -> [Int: IntervalHealth] {
        var merged: [Int: IntervalHealth] = [:]
        for shard in shards {
            let taken = shard.withLock { shard in
                defer { shard.intervals = [:] }
                return shard.intervals
            }
            for (index, health) in taken { merged[index, default: IntervalHealth()].merge(health) }
        }
        return merged
    }

    private func index(_ due: Duration) -> Int { Int(max(0, due.microseconds) / intervalMicros) }

    /// Arrivals dropped so far, for the progress line.
    public var droppedSoFar: Int { shards[0].withLock { $0.droppedAtCap + $0.droppedLate + $0.droppedSaturated } }

    /// Everything so far, judged against `limits`.
    public func report(model: LoadModel, limits: GeneratorLimits) -> GeneratorReport {
        var total = Shard()
        for shard in shards {
            let taken = shard.withLock { $0 }
            total.lag.merge(taken.lag)
            total.started += taken.started
            total.droppedAtCap += taken.droppedAtCap
            total.droppedLate += taken.droppedLate
            total.droppedSaturated += taken.droppedSaturated
        }
        let report = GeneratorReport(
            model: model.rawValue, started: total.started, droppedAtCap: total.droppedAtCap, droppedLate: total.droppedLate,
            droppedSaturated: total.droppedSaturated, lagSamples: total.lag.totalCount, lagHistogram: total.lag.serialized(),
            lagP50Micros: total.lag.value(atPercentile: 50), lagP99Micros: total.lag.value(atPercentile: 99),
            lagMaxMicros: total.lag.max, maxLagP99Micros: Int(limits.maxLagP99.microseconds),
            maxDroppedRate: limits.maxDroppedRate, dropAfterMicros: Int(limits.dropAfter.microseconds))
        return report
    }
}

/// The generator's figures for one interval of the time series.
struct IntervalHealth: Sendable, Equatable {
    var dropped = 0
    var maxLagMicros = 0

    mutating func lagged(_ micros: Int) { maxLagMicros = max(maxLagMicros, micros) }

    mutating func merge(_ other: IntervalHealth) {
        dropped += other.dropped
        maxLagMicros = max(maxLagMicros, other.maxLagMicros)
    }
}
