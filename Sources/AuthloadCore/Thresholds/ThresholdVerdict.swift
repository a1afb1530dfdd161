/// How one threshold came out, as `result.json`, the report and `junit.xml` show it.
public struct ThresholdVerdict: Codable, Sendable, Equatable {
    /// The rule in words, e.g. `login p99 ≤ 800ms (1m windows)`.
    public var name: String
    public var metric: String
    /// Where it sits in the profile, e.g. `thresholds[2]`.
    public var path: String
    public var kind: Kind
    /// The bound, in the unit of ``kind``: microseconds, a fraction, or samples per second.
    public var bound: Double
    /// The value judged (the worst window's, when windowed), in the same unit; nil when there were no samples.
    public var measured: Double?
    /// Window length in seconds; nil for a whole-run threshold.
    public var windowSeconds: Double?
    /// Start of the worst window, seconds from the start of the run.
    public var worstWindowStartSeconds: Double?
    public var passed: Bool
    /// This threshold's failure stopped the run early (`abortOnFail`).
    public var abortedRun: Bool
    /// A percentile's samples: successful ones (the default) or all; nil for other bounds and older results.
    public var samples: Threshold.Samples?
    /// The percentile a latency bound judges (e.g. 99); nil for other bounds and older results.
    public var percentile: Double?

    public enum Kind: String, Codable, Sendable {
        case percentile, errorRate, throughput
    }

    public init(
        name: String, metric: String, path: String, kind: Kind, bound: Double, measured: Double?,
        windowSeconds: Double? = nil, worstWindowStartSeconds: Double? = nil, passed: Bool, abortedRun: Bool = false
    ) {
        self.name = name
        self.metric = metric
        self.path = path
        self.kind = kind
        self.bound = bound
        self.measured = measured
        self.windowSeconds = windowSeconds
        self.worstWindowStartSeconds = worstWindowStartSeconds
        self.passed = passed
        self.abortedRun = abortedRun
    }

    /// The measured value in the bound's unit as text: `912.3ms`, `1.40%`, `48.2/s`, or `no samples`.
    public var measuredText: String { measured.map { Self.format($0, kind) } ?? "no samples" }

    /// Which samples were judged, as a phrase to follow the measured value: ` of successful samples`; empty
    /// when the bound is not a latency.
    public var samplesText: String { samples.map { " of \($0.rawValue) samples" } ?? "" }

    public var boundText: String { Self.format(bound, kind) }

    static func format(_ value: Double, _ kind: Kind) -> String {
        switch kind {
        case .percentile: value >= 1_000_000 ? fixed(value / 1_000_000, 3) + "s" : fixed(value / 1000, 1) + "ms"
        case .errorRate: fixed(value * 100, 2) + "%"
        case .throughput: fixed(value, 1) + "/s"
        }
    }

    /// `value` rounded to `digits` decimals, without Foundation's formatter (Core stays Foundation-light).
    static func fixed(_ value: Double, _ digits: Int) -> String {
        var scale = 1.0
        for _ in 0..<digits { scale *= 10 }
        let scaled = (abs(value) * scale).rounded()
        guard scaled < 1e17 else { return String(value) }
        let whole = Int(scaled) / Int(scale)
        let fraction = Int(scaled) % Int(scale)
        let digitsText = String(fraction)
        // With no decimals the fraction is 0 and has no padding (a negative count would trap).
        let padded = String(repeating: "0", count: Swift.max(0, digits - digitsText.count)) + digitsText
        return (value < 0 && scaled > 0 ? "-" : "") + String(whole) + (digits > 0 ? "." + padded : "")
    }
}
