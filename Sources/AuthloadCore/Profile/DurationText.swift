/// Parses and prints durations the way profiles and the CLI write them: `250ms`, `30s`, `2m`, `1h`, `1m30s`.
public enum DurationText {
    /// Returns nil when `text` is not a duration; callers turn that into an error naming the field.
    public static func parse(_ text: String) -> Duration? {
        var total = Duration.zero
        var rest = Substring(text.trimmingSpaces)
        guard !rest.isEmpty else { return nil }
        while !rest.isEmpty {
            let number = rest.prefix { $0.isNumber || $0 == "." }
            guard !number.isEmpty, let value = Double(number), value.isFinite else { return nil }
            rest = rest.dropFirst(number.count)
            let unit = rest.prefix { $0.isLetter || $0 == "µ" }
            rest = rest.dropFirst(unit.count)
            let scale: Double
            switch unit {
            case "us", "µs": scale = 1e-6
            case "ms": scale = 1e-3
            case "s": scale = 1
            case "m": scale = 60
            case "h": scale = 3600
            case "d": scale = 86_400
            default: return nil
            }
            let seconds = value * scale
            guard seconds < 1e9 else { return nil }
            total += Duration(roundedSeconds: seconds)
        }
        return total
    }

    /// The shortest exact text for `duration` at microsecond resolution, e.g. `1m30s`, `250ms`, `0s`.
    public static func format(_ duration: Duration) -> String {
        var micros = duration.microseconds
        if micros == 0 { return "0s" }
        let sign = micros < 0 ? "-" : ""
        micros = Swift.abs(micros)
        if micros % 1_000_000 != 0 {
            if micros < 1_000_000 {
                return micros % 1000 == 0 ? "\(sign)\(micros / 1000)ms" : "\(sign)\(micros)us"
            }
            return "\(sign)\(Double(micros) / 1e6)s"
        }
        var seconds = micros / 1_000_000
        var text = sign
        for (unit, size) in [("h", Int64(3600)), ("m", 60), ("s", 1)] where seconds >= size {
            text += "\(seconds / size)\(unit)"
            seconds %= size
        }
        return text
    }
}

extension Duration {
    /// Whole microseconds, the unit of every latency authload records.
    public var microseconds: Int64 { whole(1_000_000_000_000) }

    /// Whole nanoseconds, the unit of the event loops' clock.
    public var nanoseconds: Int64 { whole(1_000_000_000) }

    /// How many whole units of `unit` attoseconds this is, truncated toward zero as `components` truncates.
    ///
    /// Every request converts a handful of durations. `components` divides 128 bits by 10^18 in a library call;
    /// this divides 64 bits by a constant (a multiply) when the duration is under 9.2 s, and otherwise 128 bits by
    /// 64 in one instruction.
    @inline(__always)
    private func whole(_ unit: Int64) -> Int64 {
        let attoseconds = self.attoseconds
        if let small = Int64(exactly: attoseconds) { return small / unit }
        let magnitude = attoseconds.magnitude
        let high = UInt64(truncatingIfNeeded: magnitude >> 64)
        guard high < UInt64(unit) else { preconditionFailure("\(self) is too long to count in units of \(unit) as") }
        let quotient = Int64(exactly: UInt64(unit).dividingFullWidth((high, UInt64(truncatingIfNeeded: magnitude))).quotient)
        guard let quotient else { preconditionFailure("\(self) is too long to count in units of \(unit) as") }
        return attoseconds < 0 ? -quotient : quotient
    }

    public var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) * 1e-18
    }

    /// `seconds` to the nearest microsecond: the way back from ``seconds`` for the figures `result.json` holds.
    public init(roundedSeconds seconds: Double) {
        self = .microseconds(Int64((seconds * 1e6).rounded()))
    }
}

extension StringProtocol {
    var trimmingSpaces: Substring {
        let s = self[...]
        let start = s.firstIndex { !$0.isWhitespace } ?? s.endIndex
        let end = s.lastIndex { !$0.isWhitespace }.map { s.index(after: $0) } ?? start
        return Substring(s[start..<end])
    }
}
