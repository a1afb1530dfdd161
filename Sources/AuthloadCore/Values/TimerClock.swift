/// A clock that runs work at an instant without a task asleep on it, as a simulation's clock does.
///
/// A wait for "a deadline or an event" then takes one continuation and a timer, where on any other clock it takes a
/// race of tasks (``race(_:)``): the closed model's scheduler waits so once a user's turn (``Runner``).
public protocol TimerClock: Clock {
    associatedtype Timer: Sendable

    /// Runs `work` once the clock reaches `deadline` (soon after, when it has passed already); returns a handle for
    /// ``cancel(_:)``.
    @discardableResult
    func schedule(at deadline: Instant, _ work: @escaping @Sendable () -> Void) -> Timer

    /// Calls off a timer that has not run yet; nothing when it has run or was cancelled.
    func cancel(_ timer: Timer)
}

/// Work at an instant of a clock known only as `C`: a timer when the clock is a ``TimerClock``.
struct DeadlineAlarm<C: Clock>: Sendable {
    private let arm: @Sendable (C.Instant, @escaping @Sendable () -> Void) -> @Sendable () -> Void

    /// Nil unless `clock` is a ``TimerClock``.
    init?(_ clock: C) {
        guard let timers = clock as? any TimerClock else { return nil }
        arm = Self.arming(timers)
    }

    private static func arming<T: TimerClock>(_ timers: T) -> @Sendable (C.Instant, @escaping @Sendable () -> Void) -> @Sendable () -> Void
    {
        { deadline, work in
            // `T` is `C`: the cast only names the instant's type again.
            let timer = timers.schedule(at: deadline as! T.Instant, work)
            return { timers.cancel(timer) }
        }
    }

    /// Runs `work` at `deadline`; returns what calls it off.
    func set(at deadline: C.Instant, _ work: @escaping @Sendable () -> Void) -> @Sendable () -> Void { arm(deadline, work) }
}
