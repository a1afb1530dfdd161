/// The profile's `generator` limits: beyond them the run exits 3.
public struct GeneratorLimits: Sendable, Equatable {
    /// The schedule lag's 99th percentile may not exceed this.
    public var maxLagP99: Duration
    /// Dropped arrivals ÷ arrivals due may not exceed this.
    public var maxDroppedRate: Double
    /// An arrival the generator gets to later than this is dropped rather than started (open model).
    public var dropAfter: Duration
    /// A run in which no request has succeeded for this long while connections to the target fail stops, exit 1
    /// (``Reachability``); nil (`"0s"` in a profile) never stops.
    public var unreachableAfter: Duration?

    public init(
        maxLagP99: Duration = .milliseconds(100), maxDroppedRate: Double = 0.01, dropAfter: Duration = .seconds(1),
        unreachableAfter: Duration? = .seconds(30)
    ) {
        self.maxLagP99 = maxLagP99
        self.maxDroppedRate = maxDroppedRate
        self.dropAfter = dropAfter
        self.unreachableAfter = unreachableAfter
    }
}

/// The generator's own health over a run, as `result.json` holds it.
public struct GeneratorReport: Codable, Sendable, Equatable {
    /// `closed` or `open`.
    public var model: String
    /// Arrivals started (open model); 0 for the closed model.
    public var started: Int
    /// Arrivals not started because `maxUsers` users were alive.
    public var droppedAtCap: Int
    /// Arrivals not started because the generator got to them more than `dropAfter` late.
    public var droppedLate: Int
    /// Arrivals not started because the thread that would have carried them was saturated. A `result.json` written
    /// before this was counted reads as 0.
    public var droppedSaturated: Int
    public var lagSamples: Int
    /// Schedule lag, microseconds, as a serialized ``Histogram``.
    public var lagHistogram: String
    public var lagP50Micros: Int
    public var lagP99Micros: Int
    public var lagMaxMicros: Int
    /// The process's CPU time (user + system) over the run, seconds; nil where not measured (virtual time).
    public var cpuSeconds: Double?
    /// That CPU time as a share of the machine's cores over the run's wall time (0…1).
    public var cpuShare: Double?
    public var maxLagP99Micros: Int
    public var maxDroppedRate: Double
    public var dropAfterMicros: Int
    /// Why the generator could not keep its schedule, one sentence each; empty when it could.
    public var problems: [String] = []

    public init(
        model: String, started: Int, droppedAtCap: Int, droppedLate: Int, droppedSaturated: Int = 0, lagSamples: Int,
        lagHistogram: String, lagP50Micros: Int, lagP99Micros: Int, lagMaxMicros: Int, cpuSeconds: Double? = nil, cpuShare: Double? = nil,
        maxLagP99Micros: Int, maxDroppedRate: Double, dropAfterMicros: Int
    ) {
        self.model = model
        self.started = started
        self.droppedAtCap = droppedAtCap
        self.droppedLate = droppedLate
        self.droppedSaturated = droppedSaturated
        self.lagSamples = lagSamples
        self.lagHistogram = lagHistogram
        self.lagP50Micros = lagP50Micros
        self.lagP99Micros = lagP99Micros
        self.lagMaxMicros = lagMaxMicros
        self.cpuSeconds = cpuSeconds
        self.cpuShare = cpuShare
        self.maxLagP99Micros = maxLagP99Micros
        self.maxDroppedRate = maxDroppedRate
        self.dropAfterMicros = dropAfterMicros
        self.problems = judge()
    }

    /// Below this many lag samples the p99 is reported but not judged: it would be the one or two worst
    /// wake-ups of a short run (a process warming up, a busy CI machine), not a schedule the generator lost.
    public static let minimumLagSamples = 100

    public var dropped: Int { droppedAtCap + droppedLate + droppedSaturated }
    /// Arrivals due: started and dropped.
    public var due: Int { started + dropped }
    public var droppedRate: Double { due > 0 ? Double(dropped) / Double(due) : 0 }
    public var keptSchedule: Bool { problems.isEmpty }

    /// The limits this report breaks, in words.
    func judge() -> [String] {
        var problems: [String] = []
        if lagSamples >= Self.minimumLagSamples && lagP99Micros > maxLagP99Micros {
            problems.append(
                "schedule lag p99 \(ThresholdVerdict.format(Double(lagP99Micros), .percentile)) exceeds generator.maxLagP99 "
                    + ThresholdVerdict.format(Double(maxLagP99Micros), .percentile))
        }
        if dropped > 0 && droppedRate > maxDroppedRate {
            problems.append(
                "\(dropped) of \(due) arrivals dropped (\(ThresholdVerdict.format(droppedRate, .errorRate)): "
                    + "\(droppedAtCap) at the maxUsers cap, \(droppedLate) late\(saturatedClause)) exceeds generator.maxDroppedRate "
                    + ThresholdVerdict.format(maxDroppedRate, .errorRate))
        }
        return problems
    }

    /// The saturated drops, when there were any, with what to do about them.
    private var saturatedClause: String {
        guard droppedSaturated > 0 else { return "" }
        return ", \(droppedSaturated) while the generator's event loops were saturated: the generator is the limit; "
            + "lower the rate or run more shards"
    }
}

extension GeneratorReport {
    private enum CodingKeys: String, CodingKey {
        case model, started, droppedAtCap, droppedLate, droppedSaturated, lagSamples, lagHistogram, lagP50Micros, lagP99Micros
        case lagMaxMicros, cpuSeconds, cpuShare, maxLagP99Micros, maxDroppedRate, dropAfterMicros, problems
    }

    /// Reads `result.json`'s generator section; one from before saturated drops were counted has none.
    public init(from decoder: any Decoder) throws {
        let values = try decoder.container(keyedBy: CodingKeys.self)
        model = try values.decode(String.self, forKey: .model)
        started = try values.decode(Int.self, forKey: .started)
        droppedAtCap = try values.decode(Int.self, forKey: .droppedAtCap)
        droppedLate = try values.decode(Int.self, forKey: .droppedLate)
        droppedSaturated = try values.decodeIfPresent(Int.self, forKey: .droppedSaturated) ?? 0
        lagSamples = try values.decode(Int.self, forKey: .lagSamples)
        lagHistogram = try values.decode(String.self, forKey: .lagHistogram)
        lagP50Micros = try values.decode(Int.self, forKey: .lagP50Micros)
        lagP99Micros = try values.decode(Int.self, forKey: .lagP99Micros)
        lagMaxMicros = try values.decode(Int.self, forKey: .lagMaxMicros)
        cpuSeconds = try values.decodeIfPresent(Double.self, forKey: .cpuSeconds)
        cpuShare = try values.decodeIfPresent(Double.self, forKey: .cpuShare)
        maxLagP99Micros = try values.decode(Int.self, forKey: .maxLagP99Micros)
        maxDroppedRate = try values.decode(Double.self, forKey: .maxDroppedRate)
        dropAfterMicros = try values.decode(Int.self, forKey: .dropAfterMicros)
        problems = try values.decode([String].self, forKey: .problems)
    }
}
