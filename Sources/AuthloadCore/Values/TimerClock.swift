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
    /// A set alarm, for ``cancel(_:)``: the clock's timer, held as itself (a class's reference fits an existential's
    /// inline buffer), where a closure that cancelled it cost each of the scheduler's sleeps an allocation.
    struct Armed: Sendable {
        fileprivate let timer: any Sendable
    }

    private let arm: @Sendable (C.Instant, @escaping @Sendable () -> Void) -> any Sendable
    private let disarm: @Sendable (any Sendable) -> Void

    /// Nil unless `clock` is a ``TimerClock``.
    init?(_ clock: C) {
        guard let timers = clock as? any TimerClock else { return nil }
        (arm, disarm) = Self.arming(timers)
    }

    private static func arming<T: TimerClock>(
        _ timers: T
    ) -> (@Sendable (C.Instant, @escaping @Sendable () -> Void) -> any Sendable, @Sendable (any Sendable) -> Void) {
        // `T` is `C`: the casts only name the instant's and the timer's types again.
        ({ deadline, work in timers.schedule(at: deadline as! T.Instant, work) }, { timer in timers.cancel(timer as! T.Timer) })
    }

    /// Runs `work` at `deadline`; returns what ``cancel(_:)`` calls off.
    func set(at deadline: C.Instant, _ work: @escaping @Sendable () -> Void) -> Armed { Armed(timer: arm(deadline, work)) }

    /// Calls off an alarm that has not gone off yet; nothing when it has.
    func cancel(_ armed: Armed) { disarm(armed.timer) }
}
