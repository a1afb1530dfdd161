import Foundation

/// The time since the Unix epoch, as the staging services read it for token `iat`/`exp` and headers.
///
/// Injected, so a virtual-time run can hand the services its manual clock and see exact expiries.
public typealias WallClock = @Sendable () -> Duration

public enum WallTime {
    /// The system's real-time clock.
    public static let now: WallClock = {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return .seconds(spec.tv_sec) + .nanoseconds(spec.tv_nsec)
    }
}
