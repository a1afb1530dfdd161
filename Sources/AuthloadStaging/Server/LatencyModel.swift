import AuthloadCore
import Foundation

/// How long a staging endpoint takes to answer: fixed, uniform, or lognormal from a median and a p99.
public enum LatencyModel: Sendable, Equatable {
    case fixed(Duration)
    case uniform(min: Duration, max: Duration)
    /// Lognormal with the given median and 99th percentile: the long tail real servers have.
    case lognormal(median: Duration, p99: Duration)

    public static let none = LatencyModel.fixed(.zero)

    /// The standard normal quantile at 0.99.
    private static let z99 = 2.326_347_874_040_841

    public func sample(using random: inout SplitMix64) -> Duration {
        switch self {
        case .fixed(let duration):
            return duration
        case .uniform(let min, let max):
            return random.duration(in: ThinkTime(min: min, max: max))
        case .lognormal(let median, let p99):
            let sigma = log(p99.seconds / median.seconds) / Self.z99
            let micros = Double(median.microseconds) * exp(sigma * Self.standardNormal(&random))
            return .microseconds(Int64(micros.rounded()))
        }
    }

    /// Box–Muller: one standard normal draw from two uniforms.
    private static func standardNormal(_ random: inout SplitMix64) -> Double {
        let u1 = Double.random(in: Double.ulpOfOne..<1, using: &random)
        let u2 = Double.random(in: 0..<1, using: &random)
        return (-2 * log(u1)).squareRoot() * cos(2 * .pi * u2)
    }

    /// Reads `{"fixed": "20ms"}`, `{"uniform": {"min", "max"}}` or `{"lognormal": {"median", "p99"}}`.
    public static func read(_ reader: ProfileReader) throws(ProfileError) -> LatencyModel {
        if reader.value.stringValue != nil { return .fixed(try reader.duration()) }
        try reader.rejectUnknownKeys(allowed: ["fixed", "uniform", "lognormal"])
        if let fixed = try reader.optional("fixed") { return .fixed(try fixed.duration()) }
        if let uniform = try reader.optional("uniform") {
            let range = try Profile.thinkTime(uniform)
            return .uniform(min: range.min, max: range.max)
        }
        if let lognormal = try reader.optional("lognormal") {
            try lognormal.rejectUnknownKeys(allowed: ["median", "p99"])
            let median = try lognormal.required("median").positiveDuration()
            let p99Reader = try lognormal.required("p99")
            let p99 = try p99Reader.positiveDuration()
            guard p99 > median else { throw p99Reader.error("must be longer than the median") }
            return .lognormal(median: median, p99: p99)
        }
        throw reader.error("give one of fixed, uniform or lognormal")
    }
}
