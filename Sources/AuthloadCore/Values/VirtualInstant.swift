/// An instant on a clock that moves only when told: time since the clock was made.
///
/// The instant of the test suite's `ManualClock` and of a simulation's `SimulationClock`; both keep it as an offset
/// so that a report can print it as `t+1h30m` and a run's results do not depend on when it ran.
public struct VirtualInstant: InstantProtocol, CustomStringConvertible {
    /// Time since the clock was made.
    public var offset: Duration

    public init(offset: Duration) { self.offset = offset }

    public func advanced(by duration: Duration) -> VirtualInstant { VirtualInstant(offset: offset + duration) }
    public func duration(to other: VirtualInstant) -> Duration { other.offset - offset }
    public static func < (a: VirtualInstant, b: VirtualInstant) -> Bool { a.offset < b.offset }
    public var description: String { "t+\(DurationText.format(offset))" }
}
