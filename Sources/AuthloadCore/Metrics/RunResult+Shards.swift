/// What `authload merge` needs of each shard beyond its figures: that the shards ran one plan, and how to
/// judge that plan's thresholds again on the merged data.
public struct PlanRecord: Codable, Sendable, Equatable {
    /// The profile file's bytes, identified by the first 64 bits of their SHA-256, in hex: enough to tell two
    /// profiles apart, and too short to pass for a token (the reports hold no long hex runs).
    public var profileDigest: String
    /// Command-line options that changed the plan (`--users 100`, `--duration 1m`); empty when none did.
    public var overrides: [String]
    public var seed: UInt64
    /// Threshold windows start at or after this offset (the end of the ramp-up) and end at or before the
    /// planned end, seconds from the start.
    public var windowsFromSeconds: Double
    public var windowsUntilSeconds: Double
    /// The common start (`--start-at`) resolved to seconds since 1970, when the run had one: shards that share it
    /// share one interval grid exactly.
    public var commonStartEpochSeconds: Double?
    /// When interval 0 began, seconds since 1970: how shards without a common start are lined up.
    public var startedAtEpochSeconds: Double
    /// The load planned, for `authload compare`; nil in results written before it was recorded.
    public var load: PlannedLoad?

    public init(
        profileDigest: String, overrides: [String], seed: UInt64, windowsFromSeconds: Double, windowsUntilSeconds: Double,
        commonStartEpochSeconds: Double?, startedAtEpochSeconds: Double, load: PlannedLoad? = nil
    ) {
        self.load = load
        self.profileDigest = profileDigest
        self.overrides = overrides
        self.seed = seed
        self.windowsFromSeconds = windowsFromSeconds
        self.windowsUntilSeconds = windowsUntilSeconds
        self.commonStartEpochSeconds = commonStartEpochSeconds
        self.startedAtEpochSeconds = startedAtEpochSeconds
    }
}

/// One shard of a merged run, as the merged report lists it: where it ran, how it ended, and whether its
/// generator kept its schedule (the worst shard decides the merged run's exit 3).
public struct ShardReport: Codable, Sendable, Equatable {
    /// `I/N`.
    public var shard: String
    public var hostname: String
    public var status: RunStatus
    public var flows: Int
    public var httpRequests: Int?
    /// How far behind the common start the shard began, seconds; nil without one.
    public var startLateSeconds: Double?
    /// Where its intervals sit on the merged grid: its interval 0 is the merged run's interval `offset`.
    public var intervalOffset: Int
    public var generator: GeneratorReport?

    public init(
        shard: String, hostname: String, status: RunStatus, flows: Int, httpRequests: Int?, startLateSeconds: Double?,
        intervalOffset: Int, generator: GeneratorReport?
    ) {
        self.shard = shard
        self.hostname = hostname
        self.status = status
        self.flows = flows
        self.httpRequests = httpRequests
        self.startLateSeconds = startLateSeconds
        self.intervalOffset = intervalOffset
        self.generator = generator
    }
}

/// One series' samples over some span (a capacity stage), kept whole so that runs merge exactly.
public struct SeriesSamples: Codable, Sendable, Equatable {
    public var id: MetricID
    public var errors: Int
    /// Every sample's latency, as a serialized ``Histogram``.
    public var histogram: String
    /// The failed samples' latencies; absent when nothing failed.
    public var failedHistogram: String?

    public init(id: MetricID, _ samples: MetricSamples) {
        self.id = id
        errors = samples.errors
        histogram = samples.histogram.serialized()
        failedHistogram = samples.failures.isEmpty ? nil : samples.failures.serialized()
    }

    /// The samples back, without their error breakdown (which only the run's totals keep).
    public func samples() throws -> MetricSamples {
        try MetricSamples(errors: errors, histogram: histogram, failedHistogram: failedHistogram)
    }
}

extension MetricSamples {
    /// Samples rebuilt from their serialized histograms.
    ///
    /// - Throws: ``HistogramDecodingError`` when a histogram is damaged.
    public init(errors: Int, histogram: String, failedHistogram: String?) throws {
        self.init()
        self.histogram = try Histogram(serialized: histogram)
        if let failedHistogram { failures = try Histogram(serialized: failedHistogram) }
        self.errors = errors
    }
}
