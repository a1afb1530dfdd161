import Foundation

/// Where an axis starts and ends and which labelled ticks it carries.
struct AxisScale: Equatable {
    struct Tick: Equatable {
        var value: Double
        var label: String
    }

    var lower: Double
    var upper: Double
    var ticks: [Tick]
    /// How to read the tick labels when that is not obvious (`m:ss`), or empty.
    var hint: String = ""
    /// Positions go by the logarithm of the value (``logarithmic(_:_:)``): equal ratios take equal room.
    var isLogarithmic = false

    /// Maps `value` from the axis range onto `start...end` (pixels), clamping so a stray point stays on the chart.
    func position(_ value: Double, from start: Double, to end: Double) -> Double {
        if isLogarithmic {
            // Zero and below have no logarithm: they sit on the axis's floor.
            guard lower > 0, upper > lower, value.isFinite, value > 0 else { return start }
            let t = Swift.min(1, Swift.max(0, log10(value / lower) / log10(upper / lower)))
            return start + t * (end - start)
        }
        let span = upper - lower
        guard span > 0, value.isFinite else { return start }
        let t = Swift.min(1, Swift.max(0, (value - lower) / span))
        return start + t * (end - start)
    }
}

extension AxisScale {
    /// A value axis that starts at zero and ends on a round number at or above `maximum`.
    ///
    /// Rates, counts and latencies are never negative, and a zero baseline keeps small wobbles from
    /// looking like cliffs. An all-zero or empty series still gets a readable 0…1 axis.
    static func fromZero(to maximum: Double, maxTicks: Int = 6, format: (Double, Double) -> String = Format.tick)
        -> AxisScale
    {
        let top = maximum.isFinite && maximum > 0 ? maximum : 1
        let step = niceStep(for: top, maxTicks: maxTicks)
        let upper = (top / step).rounded(.up) * step
        return AxisScale(lower: 0, upper: upper, ticks: ticks(from: 0, to: upper, step: step, format: format))
    }

    /// A logarithmic value axis from the power of ten at or below `minimum` to the one at or above `maximum`,
    /// a tick on each power of ten.
    ///
    /// For latencies that differ by orders of magnitude on one chart (a held session's 30 s beside an 8 ms request):
    /// on a linear axis the short ones would lie flat on zero. Values at or below zero are ignored for the range.
    static func logarithmic(_ minimum: Double, _ maximum: Double) -> AxisScale {
        let low = minimum.isFinite && minimum > 0 ? minimum : 1
        let high = maximum.isFinite && maximum > low ? maximum : low
        let first = floor(log10(low))
        var last = ceil(log10(high) - 1e-9)
        if last <= first { last = first + 1 }
        let ticks = stride(from: first, through: last, by: 1).map { exponent -> Tick in
            let value = pow(10, exponent)
            return Tick(value: value, label: Format.tick(value, step: value))
        }
        return AxisScale(lower: pow(10, first), upper: pow(10, last), ticks: ticks, isLogarithmic: true)
    }

    /// A linear axis spanning exactly `lower...upper` with round ticks inside it.
    static func linear(
        _ lower: Double, _ upper: Double, maxTicks: Int = 8,
        format: (Double, Double) -> String = Format.tick
    ) -> AxisScale {
        let (lo, hi) = widened(lower, upper)
        let step = niceStep(for: hi - lo, maxTicks: maxTicks)
        let first = (lo / step).rounded(.up) * step
        return AxisScale(lower: lo, upper: hi, ticks: ticks(from: first, to: hi, step: step, format: format))
    }

    /// An elapsed-time axis in seconds whose ticks fall on whole seconds, minutes or hours.
    ///
    /// Labels read `30 s` for short runs, `12:30` (m:ss) up to an hour and `2:15` (h:mm) beyond, so a
    /// 24-hour soak is as legible as a one-minute smoke test.
    static func elapsed(_ lower: Double, _ upper: Double, maxTicks: Int = 8) -> AxisScale {
        let (lo, hi) = widened(lower, upper)
        let range = hi - lo
        let candidates: [Double] = [
            1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800,
            3600, 7200, 10800, 21600, 43200, 86400, 172_800, 432_000, 864_000
        ]
        let step: Double
        if range < 5 {
            step = niceStep(for: range, maxTicks: maxTicks)
        } else {
            step = candidates.first { range / $0 <= Double(maxTicks) } ?? niceStep(for: range, maxTicks: maxTicks)
        }
        let first = (lo / step).rounded(.up) * step
        let format: (Double, Double) -> String
        let hint: String
        if hi < 120 {
            format = { value, step in Format.tick(value, step: step) + " s" }
            hint = ""
        } else if hi < 3600 {
            format = { value, _ in clock(value, showHours: false) }
            hint = "m:ss"
        } else {
            let showSeconds = step < 60
            format = { value, _ in clock(value, showHours: true, showSeconds: showSeconds) }
            hint = showSeconds ? "h:mm:ss" : "h:mm"
        }
        return AxisScale(
            lower: lo, upper: hi, ticks: ticks(from: first, to: hi, step: step, format: format),
            hint: hint)
    }

    /// The Heckbert "nice number" nearest to `value`: 1, 2 or 5 times a power of ten.
    ///
    /// With `round` false it returns the nice number at or above `value` (for a range that must fit),
    /// with `round` true the closest one (for a step that should look even).
    static func niceNumber(_ value: Double, round: Bool) -> Double {
        guard value.isFinite, value > 0 else { return 1 }
        let exponent = floor(log10(value))
        let power = pow(10, exponent)
        let fraction = value / power
        let nice: Double
        if round {
            nice = fraction < 1.5 ? 1 : fraction < 3 ? 2 : fraction < 7 ? 5 : 10
        } else {
            nice = fraction <= 1 ? 1 : fraction <= 2 ? 2 : fraction <= 5 ? 5 : 10
        }
        return nice * power
    }

    /// A round tick spacing that puts at most about `maxTicks` ticks over `range`.
    static func niceStep(for range: Double, maxTicks: Int) -> Double {
        let spread = niceNumber(range, round: false)
        return niceNumber(spread / Double(Swift.max(1, maxTicks - 1)), round: true)
    }

    // MARK: Helpers

    /// Gives a zero-width range some room so a single point lands in the middle of a drawable axis.
    private static func widened(_ lower: Double, _ upper: Double) -> (Double, Double) {
        var lo = lower.isFinite ? lower : 0
        var hi = upper.isFinite ? upper : lo
        if hi < lo { swap(&lo, &hi) }
        guard hi - lo <= 0 else { return (lo, hi) }
        let pad = Swift.max(1, lo.magnitude * 0.1)
        // Quantities on these charts are never negative; don't invent a negative stretch of axis.
        return lo >= 0 && lo - pad < 0 ? (0, lo + pad) : (lo - pad, hi + pad)
    }

    /// Ticks at `first + k·step` up to `last`, computed by multiplication so they don't drift.
    private static func ticks(
        from first: Double, to last: Double, step: Double,
        format: (Double, Double) -> String
    ) -> [Tick] {
        guard step > 0, first.isFinite, last.isFinite else { return [] }
        var out: [Tick] = []
        var k = 0.0
        while out.count < 100 {
            var value = first + k * step
            if value > last + step * 1e-9 { break }
            // `+ 0` turns a -0 (from a negative-zero lower bound) into 0, so no label reads "-0".
            value = (value / step).rounded() * step + 0
            out.append(Tick(value: value, label: format(value, step)))
            k += 1
        }
        return out
    }

    private static func clock(_ seconds: Double, showHours: Bool, showSeconds: Bool = true) -> String {
        let total = Int(seconds.rounded())
        let h = total / 3600
        let m = total / 60 % 60
        let s = total % 60
        func pad(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
        if !showHours { return "\(total / 60):\(pad(s))" }
        return showSeconds ? "\(h):\(pad(m)):\(pad(s))" : "\(h):\(pad(m))"
    }
}
