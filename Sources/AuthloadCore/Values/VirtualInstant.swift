/// An instant on a clock that moves only when told: time since the clock was made.
///
/// The instant of the test suite's `ManualClock` and of a simulation's `SimulationClock`; both keep it as an offset
/// so that a report can print it as `t+1h30m` and a run's results do not depend on when it ran.
///
/// The offset is kept as its count of attoseconds and compared and advanced as that number: `Duration`'s own
/// operators are calls into the standard library that no caller inlines, and a simulation compares instants at every
/// step of its clock's heap and its waiting users' (the same order, the same overflow traps). The count is stored as
/// the two 64-bit words a `Duration` keeps it in, not as an `Int128`: an `Int128` field made the instant 16-byte
/// aligned, and with it in their frames the release build's open-model simulations jumped to address 0 from a task's
/// job (`Profiles/capacity.json` under `simulate`, every run; docs/development.md, "An instant of two words").
public struct VirtualInstant: InstantProtocol, CustomStringConvertible {
    @usableFromInline var low: UInt64
    @usableFromInline var high: Int64

    /// The offset in attoseconds, made from the two words where it is computed.
    @inlinable var attoseconds: Int128 { Int128(high) << 64 | Int128(low) }

    /// Time since the clock was made.
    @inlinable public var offset: Duration {
        get { Duration(attoseconds: attoseconds) }
        set { self = VirtualInstant(offset: newValue) }
    }

    @inlinable public init(offset: Duration) { self.init(attoseconds: offset.attoseconds) }

    @inlinable init(attoseconds: Int128) {
        low = UInt64(truncatingIfNeeded: attoseconds)
        high = Int64(truncatingIfNeeded: attoseconds >> 64)
    }

    @usableFromInline init(low: UInt64, high: Int64) {
        self.low = low
        self.high = high
    }

    @inlinable
    public func advanced(by duration: Duration) -> VirtualInstant {
        VirtualInstant(attoseconds: attoseconds + duration.attoseconds)
    }

    @inlinable public func duration(to other: VirtualInstant) -> Duration { Duration(attoseconds: other.attoseconds - attoseconds) }
    @inlinable public static func < (a: VirtualInstant, b: VirtualInstant) -> Bool {
        a.high < b.high || (a.high == b.high && a.low < b.low)
    }
    @inlinable public static func == (a: VirtualInstant, b: VirtualInstant) -> Bool { a.high == b.high && a.low == b.low }
    public var description: String { "t+\(DurationText.format(offset))" }
}
