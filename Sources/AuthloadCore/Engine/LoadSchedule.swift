/// The level a load asks for over time — users (closed model) or arrivals per second (open model) —
/// as linear pieces, with the instants that follow from it.
///
/// Stages ramp linearly from the level the previous stage ended at (0 before the first) to their
/// target; a stage of `0s` jumps. So a ramp, a plateau, a spike and a step test are the same concept:
///
/// ```swift
/// let steps = LoadSchedule(stages: [LoadStage(duration: .zero, target: 100), LoadStage(duration: .seconds(10), target: 100)])
/// steps.arrivalOffset(57)   // 0.57 s: arrival k is where the integral of the rate reaches k
/// ```
///
/// Every instant is computed from the start of the run, never by adding up intervals, so a long run
/// does not drift.
public struct LoadSchedule: Sendable, Equatable {
    struct Segment: Sendable, Equatable {
        var start: Double
        var length: Double
        var from: Double
        var to: Double
        /// Arrivals before this segment (the integral of the level up to its start).
        var before: Double

        var end: Double { start + length }
        var area: Double { (from + to) / 2 * length }

        func level(at t: Double) -> Double { from + (to - from) * (t - start) / length }
    }

    let segments: [Segment]
    /// The whole schedule's length.
    public let duration: Duration

    public init(stages: [LoadStage]) {
        var segments: [Segment] = []
        var level = 0.0
        var time = 0.0
        var before = 0.0
        for stage in stages {
            let length = stage.duration.seconds
            if length > 0 {
                let segment = Segment(start: time, length: length, from: level, to: stage.target, before: before)
                segments.append(segment)
                before += segment.area
                time += length
            }
            level = stage.target
        }
        self.segments = segments
        self.duration = stages.reduce(.zero) { $0 + $1.duration }
    }

    /// A constant level for `duration`.
    public init(constant level: Double, duration: Duration) {
        self.init(stages: [LoadStage(duration: .zero, target: level), LoadStage(duration: duration, target: level)])
    }

    /// The level asked for at `offset` from the start (0 outside the schedule).
    public func level(at offset: Duration) -> Double {
        let t = offset.seconds
        guard let segment = segments.first(where: { t >= $0.start && t < $0.end }) else { return 0 }
        return segment.level(at: t)
    }

    /// The highest level the schedule reaches.
    public var peak: Double { segments.reduce(0) { Swift.max($0, $1.from, $1.to) } }

    /// How many arrivals the schedule has: arrival k exists while k is below the integral of the rate.
    public var arrivalCount: Int {
        let total = segments.last.map { $0.before + $0.area } ?? 0
        return Int(total.rounded(.up))
    }

    /// When arrival number `k` (0-based) is due: where the integral of the rate reaches `k`; nil when the
    /// schedule ends first.
    public func arrivalOffset(_ k: Int) -> Duration? {
        let target = Double(k)
        for segment in segments where target < segment.before + segment.area {
            let need = target - segment.before
            let slope = (segment.to - segment.from) / segment.length
            // Solves from·τ + slope/2·τ² = need in the form that stays exact when slope is 0.
            let root = Swift.max(0, segment.from * segment.from + 2 * slope * need).squareRoot()
            let denominator = segment.from + root
            let tau = denominator > 0 ? 2 * need / denominator : 0
            return Self.duration(seconds: segment.start + Swift.min(tau, segment.length))
        }
        return nil
    }

    /// The first offset at or after `from` where the level is at least `value`; nil when it never is again.
    ///
    /// User number n of a closed model is active while the level is at least n + 1.
    public func firstOffset(whereLevelReaches value: Double, from offset: Duration) -> Duration? {
        let t0 = offset.seconds
        for segment in segments where segment.end > t0 {
            let begin = Swift.max(t0, segment.start)
            if segment.level(at: begin) >= value - 1e-9 { return Self.duration(seconds: begin) }
            guard segment.to > segment.from, segment.to >= value - 1e-9 else { continue }
            let crossing = segment.start + segment.length * (value - segment.from) / (segment.to - segment.from)
            return Self.duration(seconds: Swift.max(begin, crossing))
        }
        return nil
    }

    /// Each stage's span from the start of the run and its target.
    public static func spans(of stages: [LoadStage]) -> [(start: Duration, end: Duration, stage: LoadStage)] {
        var start = Duration.zero
        return stages.map { stage in
            defer { start += stage.duration }
            return (start, start + stage.duration, stage)
        }
    }

    static func duration(seconds: Double) -> Duration { .microseconds(Int64((seconds * 1e6).rounded())) }
}

/// One stage of a load: ramp linearly to `target` over `duration` (users, or arrivals per second).
public struct LoadStage: Sendable, Equatable {
    public var duration: Duration
    public var target: Double

    public init(duration: Duration, target: Double) {
        self.duration = duration
        self.target = target
    }
}
