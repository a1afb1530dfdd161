/// Number and text formatting shared by the CSV and HTML writers.
///
/// Everything here is locale-independent on purpose: a report written on a German laptop must parse
/// the same in CI, so decimals always use `.` and (in the HTML only) thousands use `,`.
/// Non-finite inputs never leak out as `nan` or `inf`: CSV cells become empty and human text
/// becomes an en dash.
enum Format {
    // MARK: Machine-readable (CSV)

    /// Renders `value` with exactly `decimals` fractional digits, or `""` when it is not finite.
    static func fixed(_ value: Double, decimals: Int) -> String {
        guard value.isFinite else { return "" }
        var scale = 1.0
        for _ in 0..<decimals { scale *= 10 }
        let scaled = (value.magnitude * scale).rounded()
        // Beyond 2^53 the digits are noise anyway; let the C formatter deal with it.
        guard scaled < 9.0e15 else { return value < 0 ? "-\(scaled / scale)" : "\(scaled / scale)" }
        let units = Int(scaled)
        let sign = value < 0 && units != 0 ? "-" : ""
        return sign + digits(units, decimals: decimals, grouped: false)
    }

    /// Microseconds as milliseconds with three decimals, using integer arithmetic so no rounding can creep in.
    static func millis(micros: Int) -> String {
        let sign = micros < 0 ? "-" : ""
        return sign + digits(micros.magnitude, decimals: 3, grouped: false)
    }

    /// A mean in microseconds as milliseconds with three decimals.
    static func millis(micros: Double) -> String { fixed(micros / 1000, decimals: 3) }

    // MARK: Human-readable (HTML)

    /// An integer with thousands separators: `12,345`.
    static func count(_ value: Int) -> String {
        (value < 0 ? "-" : "") + digits(value.magnitude, decimals: 0, grouped: true)
    }

    /// A latency in milliseconds with about three significant digits: `0.456`, `1.23`, `12.3`, `1,234`.
    static func ms(micros: Int) -> String { ms(micros: Double(micros)) }

    /// Like ``ms(micros:)`` for a fractional number of microseconds.
    static func ms(micros: Double) -> String { significant(micros / 1000) }

    /// A latency with its unit, switching to seconds where milliseconds get unwieldy: `1.23 ms`, `12.3 s`.
    static func latency(micros: Int) -> String {
        guard micros.magnitude >= 10_000_000 else { return ms(micros: micros) + " ms" }
        return significant(Double(micros) / 1_000_000) + " s"
    }

    /// A rate with about three significant digits: `0.25`, `12.5`, `1,234`.
    static func rate(_ value: Double) -> String { significant(value) }

    /// A fraction as a percentage: `0 %`, `0.012 %`, `1.23 %`, `100 %`.
    static func percent(_ fraction: Double) -> String {
        guard fraction.isFinite else { return "–" }
        if fraction == 0 { return "0 %" }
        let p = fraction * 100
        // A nonzero rate must never print as 0 %: someone is reading it to decide whether errors happened.
        if p.magnitude < 0.001 { return "< 0.001 %" }
        // Small error rates matter at the SLO boundary, so they keep more digits than large ones.
        let text = p < 0.1 ? trim(fixed(p, decimals: 3)) : significant(p)
        return text + " %"
    }

    /// A length of time in words a person reads at a glance: `850 ms`, `42.5 s`, `12 min 05 s`, `3 h 02 min`.
    static func duration(seconds: Double) -> String {
        guard seconds.isFinite else { return "–" }
        if seconds < 1 { return count(Int((seconds * 1000).rounded())) + " ms" }
        if seconds < 60 { return significant(seconds) + " s" }
        let total = Int(seconds.rounded())
        let h = total / 3600
        let m = total / 60 % 60
        let s = total % 60
        if h == 0 { return "\(m) min \(pad2(s)) s" }
        return "\(h) h \(pad2(m)) min"
    }

    /// A number with about three significant digits and grouped thousands; `–` if not finite.
    static func significant(_ value: Double) -> String {
        guard value.isFinite else { return "–" }
        let magnitude = value.magnitude
        let decimals: Int
        switch magnitude {
        case 0: return "0"
        case ..<1: decimals = 3
        case ..<10: decimals = 2
        case ..<100: decimals = 1
        default: decimals = 0
        }
        let text = fixed(value, decimals: decimals)
        return decimals == 0 ? group(text) : text
    }

    /// A tick label for an axis whose ticks are `step` apart: as many decimals as the step needs.
    static func tick(_ value: Double, step: Double) -> String {
        guard value.isFinite, step.isFinite, step > 0 else { return "" }
        var decimals = 0
        var s = step
        // Nice steps are 1, 2 or 5 × 10^k, so this ends after at most a handful of rounds.
        while decimals < 6, (s - s.rounded()).magnitude > 1e-9 * Swift.max(1, s) {
            s *= 10
            decimals += 1
        }
        let text = fixed(value, decimals: decimals)
        return decimals == 0 ? group(text) : text
    }

    // MARK: Text

    /// Escapes text for HTML element content and quoted attribute values alike.
    static func html(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for ch in text.unicodeScalars {
            switch ch {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.unicodeScalars.append(ch)
            }
        }
        return out
    }

    // MARK: Helpers

    /// Writes `units / 10^decimals` in decimal, optionally grouping the integer part.
    private static func digits(_ units: UInt, decimals: Int, grouped: Bool) -> String {
        var divisor: UInt = 1
        for _ in 0..<decimals { divisor *= 10 }
        let whole = String(units / divisor)
        let integer = grouped ? group(whole) : whole
        guard decimals > 0 else { return integer }
        let fraction = String(units % divisor)
        return integer + "." + String(repeating: "0", count: decimals - fraction.count) + fraction
    }

    private static func digits(_ units: Int, decimals: Int, grouped: Bool) -> String {
        digits(UInt(units), decimals: decimals, grouped: grouped)
    }

    /// Inserts `,` every three digits of the integer part of a plain decimal string.
    private static func group(_ text: String) -> String {
        var body = Substring(text)
        var sign = ""
        if body.first == "-" {
            sign = "-"
            body = body.dropFirst()
        }
        let parts = body.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        let integer = Array(parts[0])
        guard integer.count > 3 else { return text }
        var out = ""
        for (i, ch) in integer.enumerated() {
            if i > 0, (integer.count - i) % 3 == 0 { out.append(",") }
            out.append(ch)
        }
        return sign + out + (parts.count > 1 ? "." + parts[1] : "")
    }

    /// Drops trailing fractional zeros: `0.050` → `0.05`, `2.000` → `2`.
    private static func trim(_ text: String) -> String {
        guard text.contains(".") else { return text }
        var t = Substring(text)
        while t.last == "0" { t = t.dropLast() }
        if t.last == "." { t = t.dropLast() }
        return String(t)
    }

    private static func pad2(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
}
