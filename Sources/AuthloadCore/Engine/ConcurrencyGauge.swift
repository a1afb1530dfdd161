/// Counts concurrent holders of something (refreshes in flight across all users) and remembers the peak.
///
/// Shared by every user of a flow; a flow names its gauges (``Flow/gauges``) and the run reports each
/// peak. A short critical section per enter and leave: meant for events per iteration, not per sample.
public final class ConcurrencyGauge: Sendable {
    private let state = Locked((current: 0, peak: 0))

    public init() {}

    public var current: Int { state.withLock { $0.current } }
    public var peak: Int { state.withLock { $0.peak } }

    public func enter() {
        state.withLock { state in
            state.current += 1
            state.peak = max(state.peak, state.current)
        }
    }

    public func leave() { state.withLock { $0.current -= 1 } }
}

/// The highest value a flow's gauge reached during a run (e.g. 97 concurrent refreshes).
public struct PeakReading: Codable, Sendable, Equatable {
    public var flow: String
    public var name: String
    public var peak: Int

    public init(flow: String, name: String, peak: Int) {
        self.flow = flow
        self.name = name
        self.peak = peak
    }
}
