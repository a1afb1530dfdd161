import AuthloadCore

extension HTMLReport {
    /// For a staged run: the capacity curve, the last stage inside the SLO and the knee, and the per-stage table.
    static func capacity(_ r: RunResult) -> String {
        guard let c = r.capacity, !c.stages.isEmpty else { return "" }
        let unit = Format.html(c.unit)
        var verdict: String
        if !c.judged {
            verdict = "No thresholds: the stages are not judged against an SLO."
        } else if let last = c.lastPassingStage {
            verdict = "Last stage inside the SLO (every threshold met): <strong>\(Format.html(c.stages[last].label)) \(unit)</strong>."
        } else {
            verdict = "<span class=\"bad\">Not even the first stage met every threshold.</span>"
        }
        if let knee = c.kneeStage {
            verdict +=
                " Knee (p99 above \(CapacityReport.kneeFactor)× the first stage's): <strong>\(Format.html(c.stages[knee].label)) \(unit)</strong>."
        } else {
            verdict += " No knee: p99 stayed within \(CapacityReport.kneeFactor)× the first stage's."
        }
        var out = """
            <section>
            <h2>Capacity</h2>
            <p class="hint">Per stage, all flows pooled and judged on the stage's own samples. \(verdict)</p>

            """
        out += "<figure class=\"chart-box\">\n\(capacityChart(c, latency: true).render())\n</figure>\n"
        out += "<figure class=\"chart-box\">\n\(capacityChart(c, latency: false).render())\n</figure>\n"
        out += """
            <div class="table-wrap"><table class="numbers">
            <thead><tr><th class="text">Stage (\(unit))</th><th>Successful flows/s</th><th>p50 ms</th><th>p99 ms</th><th>Error rate</th>\
            <th class="text">Thresholds</th></tr></thead>
            <tbody>

            """
        for (index, stage) in c.stages.enumerated() {
            var marks: [String] = []
            if c.lastPassingStage == index { marks.append("last inside the SLO") }
            if c.kneeStage == index { marks.append("knee") }
            let label = Format.html(stage.label) + (marks.isEmpty ? "" : " <strong>(\(marks.joined(separator: ", ")))</strong>")
            let judged = !c.judged ? "–" : stage.passed ? "pass" : "FAIL: " + Format.html(stage.failedThresholds.joined(separator: "; "))
            let has = stage.flows > 0
            out += "<tr><td class=\"text\">\(label)</td><td>\(Format.rate(stage.throughput))</td>"
            out += "<td>\(has ? Format.ms(micros: stage.p50Micros) : "–")</td><td>\(has ? Format.ms(micros: stage.p99Micros) : "–")</td>"
            out += "<td\(stage.errors > 0 ? " class=\"bad\"" : "")>\(Format.percent(stage.errorRate))</td>"
            out += "<td class=\"text\(c.judged && !stage.passed ? " bad" : "")\">\(judged)</td></tr>\n"
        }
        return out + "</tbody></table></div>\n</section>\n"
    }

    /// p50/p99 (ms) or achieved throughput against each stage's target: the capacity curve.
    static func capacityChart(_ c: CapacityReport, latency: Bool) -> LineChart {
        var chart = LineChart(
            title: latency ? "Latency by stage" : "Achieved throughput by stage",
            yLabel: latency ? "ms" : "flows/s")
        chart.xAxis = .linear
        chart.xLabel = "stage target (\(c.unit))"
        func points(_ value: (StageResult) -> Double) -> [(x: Double, y: Double?)] {
            c.stages.map { ($0.target, $0.flows > 0 ? value($0) : nil) }
        }
        if latency {
            chart.series = [
                ChartSeries(name: "p50", color: percentileColors.p50, points: points { Double($0.p50Micros) / 1000 }, reduction: .max),
                ChartSeries(name: "p99", color: percentileColors.p99, points: points { Double($0.p99Micros) / 1000 }, reduction: .max)
            ]
        } else {
            chart.series = [ChartSeries(name: "achieved", color: requestColor, points: points(\.throughput))]
            // An open model's target is a rate, comparable with what was achieved; a closed model's is users.
            if c.unit == "arrivals/s" {
                chart.series.append(ChartSeries(name: "target", color: userColor, points: c.stages.map { ($0.target, $0.target) }))
            }
        }
        return chart
    }
}
