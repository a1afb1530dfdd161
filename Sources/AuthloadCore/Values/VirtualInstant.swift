/// An instant on a clock that moves only when told: time since the clock was made.
///
/// The instant of the test suite's `ManualClock` and of a simulation's `SimulationClock`; both keep it as an offset
/// so that a report can print it as `t+1h30m` and a run's results do not depend on when it ran.
///
/// The offset is kept as its count of attoseconds, the `Int128` a `Duration` is made of, and compared and advanced as
/// that number: `Duration`'s own operators are calls into the standard library that no caller inlines, and a
/// simulation compares instants at every step of its clock's heap and its waiting users' (the same order, the same
/// overflow traps).
public struct VirtualInstant: InstantProtocol, CustomStringConvertible {
    @usableFromInline var attoseconds: Int128

    /// Time since the clock was made.
    @inlinable public var offset: Duration {
        get { Duration(attoseconds: attoseconds) }
        set { attoseconds = newValue.attoseconds }
    }

    @inlinable public init(offset: Duration) { attoseconds = offset.attoseconds }

    @usableFromInline init(attoseconds: Int128) { self.attoseconds = attoseconds }

    @inlinable
    public func advanced(by duration: Duration) -> VirtualInstant {
        var instant = self
        instant.attoseconds += duration.attoseconds
        return instant
    }

    @inlinable public func duration(to other: VirtualInstant) -> Duration { Duration(attoseconds: other.attoseconds - attoseconds) }
    @inlinable public static func < (a: VirtualInstant, b: VirtualInstant) -> Bool { a.attoseconds < b.attoseconds }
    @inlinable public static func == (a: VirtualInstant, b: VirtualInstant) -> Bool { a.attoseconds == b.attoseconds }
    public var description: String { "t+\(DurationText.format(offset))" }
}
