/// Dates as HTTP (`Date`, RFC 9110 IMF-fixdate) and IDX (`expiresAt`, ISO 8601 in UTC) write them.
///
/// Rate-limit waits are worked out against the server's `Date` (docs/protocols.md, Okta IDX), so the client's own
/// clock, which may be skewed, never enters; Foundation's formatters depend on locale and are not needed
/// for two fixed formats.
///
/// ```swift
/// HTTPDate.format(epochSeconds: 784111777)          // "Sun, 06 Nov 1994 08:49:37 GMT"
/// HTTPDate.parse("Sun, 06 Nov 1994 08:49:37 GMT")   // 784111777
/// HTTPDate.iso8601(epochMilliseconds: 0)            // "1970-01-01T00:00:00.000Z"
/// ```
public enum HTTPDate {
    private static let weekdays = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"] // 1970-01-01 was a Thursday
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// Returns the IMF-fixdate of a time in whole seconds since the Unix epoch.
    public static func format(epochSeconds: Int64) -> String {
        let (days, secondOfDay) = epochSeconds.quotientAndRemainderFloored(by: 86_400)
        let (year, month, day) = civil(fromDays: days)
        let weekday = weekdays[Int((days % 7 + 7) % 7)]
        return "\(weekday), \(pad(day, 2)) \(months[month - 1]) \(pad(year, 4)) "
            + "\(pad(Int(secondOfDay / 3600), 2)):\(pad(Int(secondOfDay / 60 % 60), 2)):\(pad(Int(secondOfDay % 60), 2)) GMT"
    }

    /// Reads an IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`) into seconds since the Unix epoch; nil for anything else.
    public static func parse(_ text: some StringProtocol) -> Int64? {
        let parts = text.split(separator: " ")
        guard parts.count == 6, parts[0].hasSuffix(","), parts[5] == "GMT",
            let day = Int(parts[1]), let monthIndex = months.firstIndex(of: String(parts[2])), let year = Int(parts[3]),
            (1...31).contains(day)
        else { return nil }
        let clock = parts[4].split(separator: ":")
        guard clock.count == 3, let hour = Int(clock[0]), let minute = Int(clock[1]), let second = Int(clock[2]),
            (0..<24).contains(hour), (0..<60).contains(minute), (0...60).contains(second)
        else { return nil }
        let days = daysFromCivil(year: year, month: monthIndex + 1, day: day)
        return days * 86_400 + Int64(hour * 3600 + minute * 60 + second)
    }

    /// Returns `yyyy-MM-ddTHH:mm:ss.SSSZ` for a time in milliseconds since the Unix epoch, as IDX `expiresAt` reads.
    public static func iso8601(epochMilliseconds: Int64) -> String {
        let (seconds, millis) = epochMilliseconds.quotientAndRemainderFloored(by: 1000)
        let (days, secondOfDay) = seconds.quotientAndRemainderFloored(by: 86_400)
        let (year, month, day) = civil(fromDays: days)
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T\(pad(Int(secondOfDay / 3600), 2)):"
            + "\(pad(Int(secondOfDay / 60 % 60), 2)):\(pad(Int(secondOfDay % 60), 2)).\(pad(Int(millis), 3))Z"
    }

    private static func pad(_ value: Int, _ width: Int) -> String {
        let text = String(value)
        return String(repeating: "0", count: max(0, width - text.count)) + text
    }

    /// Howard Hinnant's `civil_from_days`: the proleptic Gregorian date of a day count since 1970-01-01.
    private static func civil(fromDays days: Int64) -> (year: Int, month: Int, day: Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (Int(yearOfEra + era * 400 + (month <= 2 ? 1 : 0)), Int(month), Int(day))
    }

    /// The inverse, `days_from_civil`.
    private static func daysFromCivil(year: Int, month: Int, day: Int) -> Int64 {
        let y = Int64(month <= 2 ? year - 1 : year)
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let m = Int64(month)
        let dayOfYear = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + Int64(day) - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}

extension Int64 {
    /// Division rounding towards minus infinity, so times before 1970 still split into a day and a time of day.
    fileprivate func quotientAndRemainderFloored(by divisor: Int64) -> (Int64, Int64) {
        let (q, r) = quotientAndRemainder(dividingBy: divisor)
        return r < 0 ? (q - 1, r + divisor) : (q, r)
    }
}
