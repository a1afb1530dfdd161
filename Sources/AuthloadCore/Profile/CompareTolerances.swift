/// How much worse a run may be than a baseline before `authload compare` calls it a regression.
///
/// Latency tolerances are relative increases of a percentile (0.2 = 20 % slower); the error-rate
/// tolerance is an absolute increase of the fraction (0.01 = one percentage point). Latency changes
/// smaller than `minLatencyDelta` never count, so a 1.0 → 1.3 ms wobble on a fast step is not a regression.
///
/// ```json
/// "compare": {"p50": 0.2, "p99": 0.3, "errorRate": 0.01, "minLatencyDelta": "1ms"}
/// ```
public struct CompareTolerances: Sendable, Equatable {
    public var p50: Double
    public var p99: Double
    public var errorRate: Double
    public var minLatencyDelta: Duration

    public init(p50: Double = 0.2, p99: Double = 0.2, errorRate: Double = 0.01, minLatencyDelta: Duration = .milliseconds(1)) {
        self.p50 = p50
        self.p99 = p99
        self.errorRate = errorRate
        self.minLatencyDelta = minLatencyDelta
    }

    /// Reads a profile's `compare` section.
    public static func read(_ reader: ProfileReader) throws(ProfileError) -> CompareTolerances {
        try reader.rejectUnknownKeys(allowed: ["p50", "p99", "errorRate", "minLatencyDelta"])
        var tolerances = CompareTolerances()
        if let r = try reader.optional("p50") { tolerances.p50 = try relative(r) }
        if let r = try reader.optional("p99") { tolerances.p99 = try relative(r) }
        if let r = try reader.optional("errorRate") { tolerances.errorRate = try r.fraction() }
        if let r = try reader.optional("minLatencyDelta") { tolerances.minLatencyDelta = try r.duration() }
        return tolerances
    }

    private static func relative(_ reader: ProfileReader) throws(ProfileError) -> Double {
        let value = try reader.double()
        guard value >= 0, value.isFinite else { throw reader.error("must be 0 or more (a fraction: 0.2 allows 20 % slower)") }
        return value
    }

    /// Reads a command-line tolerance: `20%` or `0.2`; nil when it is neither.
    public static func parseFraction(_ text: String) -> Double? {
        let trimmed = text.trimmingSpaces
        let value: Double?
        if trimmed.hasSuffix("%") { value = Double(trimmed.dropLast()).map { $0 / 100 } } else { value = Double(trimmed) }
        guard let value, value >= 0, value.isFinite else { return nil }
        return value
    }
}
