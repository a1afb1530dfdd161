import CSystem

/// A point on the monotonic clock (CLOCK_MONOTONIC) that the event loops time everything with.
///
/// Deadlines, timer due times and the marks of a request's timing are instants; what lies between two
/// instants is a `Duration`. The two used to be one bare `Int64` of nanoseconds, where adding two
/// deadlines or waiting "until" a timeout compiled just as well as the right thing.
///
/// Connection state machines never read the clock: they are handed the instant of each event, so
/// their tests choose time freely and need no socket and no sleep.
struct MonotonicInstant: InstantProtocol, CustomStringConvertible {
    /// Nanoseconds since the clock's origin (boot, on Linux).
    let nanoseconds: Int64

    init(nanoseconds: Int64) { self.nanoseconds = nanoseconds }

    /// The loops' clock, read now.
    static var now: MonotonicInstant { MonotonicInstant(nanoseconds: Int64(authload_monotonic_ns())) }

    func advanced(by duration: Duration) -> MonotonicInstant {
        MonotonicInstant(nanoseconds: nanoseconds + duration.nanoseconds)
    }

    func duration(to other: MonotonicInstant) -> Duration { .nanoseconds(other.nanoseconds - nanoseconds) }

    static func < (a: MonotonicInstant, b: MonotonicInstant) -> Bool { a.nanoseconds < b.nanoseconds }

    static func + (instant: MonotonicInstant, duration: Duration) -> MonotonicInstant { instant.advanced(by: duration) }

    /// How long after `earlier` this instant is.
    static func - (later: MonotonicInstant, earlier: MonotonicInstant) -> Duration { earlier.duration(to: later) }

    var description: String { "\(Double(nanoseconds) / 1e9) s" }
}
