/// How long a user waits, on top of its think time, after flows that could not connect to the target.
///
/// With no think time a user whose connection is refused goes straight on to its next flow, which fails at once
/// too: ten users against a closed port made 437,674 failed flows in 5 s, a spin that measured nothing and kept a
/// core busy. After each consecutive connection failure the wait doubles from ``first`` up to ``cap``, drawn
/// between half and all of that (jittered, so users that failed together do not retry together), and the first
/// flow that gets through resets it.
public enum ConnectionBackoff {
    public static let first = Duration.milliseconds(100)
    public static let cap = Duration.seconds(5)

    /// The wait after `failures` consecutive connection failures (none for 0), drawn from `random`.
    public static func delay(afterFailures failures: Int, using random: inout SplitMix64) -> Duration {
        guard failures > 0 else { return .zero }
        // 2^6 × 100 ms is past the cap already: a longer run of failures must not overflow the shift.
        let ceiling = min(cap, first * (1 << min(failures - 1, 6)))
        let micros = ceiling.microseconds
        return .microseconds(Int64.random(in: micros / 2...micros, using: &random))
    }
}
