import AuthloadCore

extension HTMLReport {
    /// The pass/fail table: first thing after the notes, since it decides the run's exit code.
    static func thresholds(_ r: RunResult) -> String {
        guard !r.thresholds.isEmpty else { return "" }
        let failed = r.thresholds.filter { !$0.passed }.count
        let verdict =
            failed == 0
            ? "All \(r.thresholds.count) thresholds held."
            : "\(failed) of \(r.thresholds.count) thresholds failed: the run exits 2."
        var out = """
            <section>
            <h2>Thresholds</h2>
            <p class="hint\(failed == 0 ? "" : " bad")">\(verdict) Windowed thresholds show their worst window.</p>
            <div class="table-wrap"><table class="numbers">
            <thead><tr><th class="text">Result</th><th class="text">Threshold</th><th>Measured</th><th>Bound</th>\
            <th class="text">Worst window</th></tr></thead>
            <tbody>

            """
        for v in r.thresholds {
            let result =
                v.passed ? "<td class=\"text\">pass</td>" : "<td class=\"text bad\">FAIL\(v.abortedRun ? " (aborted the run)" : "")</td>"
            let window =
                v.worstWindowStartSeconds.map { start in
                    "from \(Format.duration(seconds: start)) for \(Format.duration(seconds: v.windowSeconds ?? 0))"
                } ?? (v.windowSeconds == nil ? "whole run" : "whole run (shorter than one window)")
            out += "<tr>\(result)<td class=\"text\">\(Format.html(v.name))</td>"
            out +=
                "<td\(v.passed ? "" : " class=\"bad\"")>\(Format.html(v.measuredText + v.samplesText))</td><td>\(Format.html(v.boundText))</td>"
            out += "<td class=\"text\">\(window)</td></tr>\n"
        }
        return out + "</tbody></table></div>\n</section>\n"
    }
}
