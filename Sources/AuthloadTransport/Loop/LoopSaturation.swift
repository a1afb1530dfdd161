/// Decides from an event loop's waits whether the loop is saturated: busy for nearly all of several windows in a row.
///
/// A loop that never waits in `epoll_wait` has more work than its core can do, and the open model then stops
/// starting new arrivals on it (`Runner+Open.swift`). Without that, a generator pushed past its limit does not
/// merely level off: the users it cannot serve pile up (10,000 waiting for a 64-connection pool at 40,000
/// arrivals/s), their tasks and buffers no longer fit in the caches, every request costs more, and the loop
/// completes fewer flows than it did before it saturated (28,000/s against 40,000/s), never catching up.
///
/// One busy window alone is a pause (another process on the core, a burst of page faults) that a late start
/// absorbs; only a run of them is a load. A loop that blocks for long ends its window late, and that window's
/// waiting makes it idle.
///
/// ```swift
/// var saturation = LoopSaturation(start: .now)
/// if let saturated = saturation.woke(at: .now, afterWaiting: waited) { publish(saturated) }
/// ```
struct LoopSaturation {
    /// How long one window lasts, at least: it ends at the first wake-up after this.
    static let window = Duration.milliseconds(10)
    /// The share of a window spent outside `epoll_wait` from which the window counts as busy.
    static let busyShare = 0.97
    /// How many busy windows in a row make the loop saturated.
    static let busyWindows = 3

    private var windowStart: MonotonicInstant
    private var waited = Duration.zero
    private var busyInARow = 0

    init(start: MonotonicInstant) {
        windowStart = start
    }

    /// Notes that the loop woke at `now` after waiting `waited` in `epoll_wait` (zero when it did not block).
    ///
    /// - Returns: at the end of a window, whether the loop is saturated; nil within a window.
    mutating func woke(at now: MonotonicInstant, afterWaiting waited: Duration) -> Bool? {
        self.waited += waited
        let length = now - windowStart
        guard length >= Self.window else { return nil }
        let busy = length - self.waited
        busyInARow = Double(busy.nanoseconds) >= Self.busyShare * Double(length.nanoseconds) ? busyInARow + 1 : 0
        windowStart = now
        self.waited = .zero
        return busyInARow >= Self.busyWindows
    }
}
