import AuthloadCore
import Testing

/// `microseconds` and `nanoseconds` take a fast path under 9.2 s (64 bits of attoseconds) and another beyond it;
/// both must truncate toward zero exactly as `components` does.
struct DurationUnitsTests {
    static func fromComponents(_ duration: Duration, unit: Int64) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds * (1_000_000_000_000_000_000 / unit) + attoseconds / unit
    }

    @Test(
        "whole units truncate toward zero on both sides of 2^63 attoseconds",
        arguments: [
            Duration.zero, .nanoseconds(1), .nanoseconds(-1), .nanoseconds(999), .microseconds(1_500), .milliseconds(-2_750),
            // 2^63 attoseconds is 9.223372036854775808 s: just under, at, and just over it.
            .init(secondsComponent: 9, attosecondsComponent: 223_372_036_854_775_807),
            .init(secondsComponent: 9, attosecondsComponent: 223_372_036_854_775_808),
            .init(secondsComponent: 9, attosecondsComponent: 223_372_036_854_775_809),
            .init(secondsComponent: -9, attosecondsComponent: -223_372_036_854_775_809),
            .seconds(10), .seconds(-10), .init(secondsComponent: 86_400 * 30, attosecondsComponent: 999_999_999_999_999_999),
            .init(secondsComponent: -3_600, attosecondsComponent: -123_456_789_012)
        ])
    func wholeUnits(duration: Duration) {
        #expect(duration.nanoseconds == Self.fromComponents(duration, unit: 1_000_000_000))
        #expect(duration.microseconds == Self.fromComponents(duration, unit: 1_000_000_000_000))
    }

    @Test("a year in nanoseconds, beyond the fast path, is exact")
    func aYear() {
        let year = Duration.seconds(365 * 86_400) + .nanoseconds(7)
        #expect(year.nanoseconds == 365 * 86_400 * 1_000_000_000 + 7)
        #expect(year.microseconds == 365 * 86_400 * 1_000_000)
    }
}
