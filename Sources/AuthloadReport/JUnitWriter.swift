import AuthloadCore

/// Renders `junit.xml`, the file CI systems read to show a nightly run's verdict.
///
/// One test case for the run itself (it fails when the run was interrupted, aborted or failed), then one
/// per threshold, carrying the measured value and the bound, so a CI page says which bound broke and by
/// how much without anyone opening the HTML report.
public enum JUnitWriter {
    public static func render(_ result: RunResult) -> String {
        let suite = "authload.\(result.profileName)"
        var cases: [String] = [runCase(result, suite: suite)]
        cases += result.thresholds.map { thresholdCase($0, suite: suite) }
        let failures = (result.status == .completed ? 0 : 1) + result.thresholds.filter { !$0.passed }.count
        let time = seconds(result.durationSeconds)
        var out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        out += "<testsuites name=\"authload\" tests=\"\(cases.count)\" failures=\"\(failures)\" errors=\"0\" time=\"\(time)\">\n"
        out += "  <testsuite name=\"\(xml(suite))\" tests=\"\(cases.count)\" failures=\"\(failures)\" errors=\"0\" "
        out += "skipped=\"0\" time=\"\(time)\" timestamp=\"\(xml(result.startedAt))\" hostname=\"\(xml(result.environment.hostname))\">\n"
        out += "    <properties>\n"
        out += "      <property name=\"target\" value=\"\(xml(result.environment.target))\"/>\n"
        out += "      <property name=\"authload\" value=\"\(xml(result.environment.authloadVersion))\"/>\n"
        out += "      <property name=\"status\" value=\"\(result.status.rawValue)\"/>\n"
        if result.environment.simulated == true { out += "      <property name=\"simulated\" value=\"true\"/>\n" }
        out += "    </properties>\n"
        out += cases.joined()
        out += "  </testsuite>\n</testsuites>\n"
        return out
    }

    private static func runCase(_ r: RunResult, suite: String) -> String {
        var out = "    <testcase classname=\"\(xml(suite))\" name=\"run \(r.status.rawValue)\" time=\"\(seconds(r.durationSeconds))\">\n"
        if r.status != .completed {
            let message = r.notes.first ?? "the run did not reach its planned end"
            out += "      <failure type=\"\(r.status.rawValue)\" message=\"\(xml(message))\"/>\n"
        }
        if !r.notes.isEmpty { out += "      <system-out>\(xml(r.notes.joined(separator: "\n")))</system-out>\n" }
        return out + "    </testcase>\n"
    }

    private static func thresholdCase(_ v: ThresholdVerdict, suite: String) -> String {
        let where_ = v.worstWindowStartSeconds.map { " in the window from \(Int($0)) s" } ?? ""
        let summary = "measured \(v.measuredText)\(v.samplesText)\(where_); bound \(v.boundText)"
        var out = "    <testcase classname=\"\(xml(suite)).thresholds\" name=\"\(xml(v.name))\" time=\"0\">\n"
        if !v.passed {
            let type = v.abortedRun ? "threshold-aborted-run" : "threshold"
            out += "      <failure type=\"\(type)\" message=\"\(xml(summary))\">\(xml("\(v.path): \(v.name)\n\(summary)"))</failure>\n"
        }
        out += "      <system-out>\(xml(summary))</system-out>\n"
        return out + "    </testcase>\n"
    }

    private static func seconds(_ value: Double) -> String { Format.fixed(value, decimals: 3) }

    /// Escapes for XML content and attributes, and drops the control characters XML 1.0 cannot carry.
    static func xml(_ text: String) -> String {
        let allowed = String(String.UnicodeScalarView(text.unicodeScalars.filter { $0.value >= 0x20 || $0 == "\n" || $0 == "\t" }))
        return Format.html(allowed)
    }
}
