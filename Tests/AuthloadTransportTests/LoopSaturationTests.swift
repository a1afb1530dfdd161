import AuthloadCore
import Testing

@testable import AuthloadTransport

@Suite("When an event loop counts as saturated")
struct LoopSaturationTests {
    static func at(_ milliseconds: Double) -> MonotonicInstant {
        MonotonicInstant(nanoseconds: 1_000_000_000_000 + Int64(milliseconds * 1e6))
    }

    /// Wakes every millisecond from `from` to `to`, having waited `waitedMicros` before each wake; returns each window's verdict.
    static func run(_ saturation: inout LoopSaturation, from: Int, to: Int, waitedMicros: Int) -> [Bool] {
        (from...to).compactMap { saturation.woke(at: at(Double($0)), afterWaiting: .microseconds(waitedMicros)) }
    }

    @Test("a loop that never blocks is saturated from its third 10 ms window, not before")
    func busyWindowsInARow() {
        var saturation = LoopSaturation(start: Self.at(0))
        #expect(Self.run(&saturation, from: 1, to: 30, waitedMicros: 0) == [false, false, true])
        #expect(Self.run(&saturation, from: 31, to: 50, waitedMicros: 0) == [true, true])
    }

    @Test("windows busy 96 % of the time do not count, 97.5 % do")
    func busyShare() {
        var idleEnough = LoopSaturation(start: Self.at(0))
        #expect(Self.run(&idleEnough, from: 1, to: 50, waitedMicros: 40) == [false, false, false, false, false])
        var busy = LoopSaturation(start: Self.at(0))
        #expect(Self.run(&busy, from: 1, to: 50, waitedMicros: 25) == [false, false, true, true, true])
    }

    @Test("one window with idle time in it starts the count again: a pause is not a load")
    func idleWindowResets() {
        var saturation = LoopSaturation(start: Self.at(0))
        #expect(Self.run(&saturation, from: 1, to: 20, waitedMicros: 0) == [false, false])
        // The third window waits 2 ms of its 10 in one go.
        #expect(saturation.woke(at: Self.at(21), afterWaiting: .milliseconds(2)) == nil)
        #expect(Self.run(&saturation, from: 22, to: 30, waitedMicros: 0) == [false])
        #expect(Self.run(&saturation, from: 31, to: 60, waitedMicros: 0) == [false, false, true])
    }

    @Test("a long block ends its window late, idle, whatever came before")
    func longBlock() {
        var saturation = LoopSaturation(start: Self.at(0))
        #expect(Self.run(&saturation, from: 1, to: 30, waitedMicros: 0) == [false, false, true])
        #expect(saturation.woke(at: Self.at(2_030), afterWaiting: .seconds(2)) == false)
    }
}
