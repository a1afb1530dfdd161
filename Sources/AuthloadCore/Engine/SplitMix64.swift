/// A small, fast, seedable random generator, so every run with the same seed makes the same choices.
public struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64

    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A duration drawn uniformly from `min...max` at microsecond resolution.
    public mutating func duration(in range: ThinkTime) -> Duration {
        let low = range.min.microseconds
        let high = range.max.microseconds
        guard high > low else { return range.min }
        return .microseconds(Int64.random(in: low...high, using: &self))
    }
}
