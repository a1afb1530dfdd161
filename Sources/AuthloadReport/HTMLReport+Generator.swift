import AuthloadCore

extension HTMLReport {
    /// The red banner of a run whose generator could not keep its schedule: shown before anything else,
    /// because then no figure of the run says anything about the server.
    static func generatorBanner(_ r: RunResult) -> String {
        guard let g = r.generator, !g.keptSchedule else { return "" }
        var out = "<div class=\"callout callout-bad generator-bad\" role=\"alert\">\n"
        out +=
            "<strong>The load generator could not keep its schedule: this run says nothing reliable about the server (exit 3).</strong>\n<ul>\n"
        out += g.problems.map { "<li>\(Format.html($0))</li>\n" }.joined()
        return out + "</ul>\n</div>\n"
    }

    /// Schedule lag, dropped arrivals and CPU, against the profile's `generator` limits.
    static func generatorHealth(_ r: RunResult) -> String {
        guard let g = r.generator else { return "" }
        var rows: [(String, String, String, Bool)] = [
            ("Schedule lag p50", Format.latency(micros: g.lagP50Micros), "", false),
            (
                "Schedule lag p99", Format.latency(micros: g.lagP99Micros), "≤ " + Format.latency(micros: g.maxLagP99Micros),
                g.lagSamples > 0 && g.lagP99Micros > g.maxLagP99Micros
            ),
            ("Schedule lag max", Format.latency(micros: g.lagMaxMicros), "", false)
        ]
        if g.model == LoadModel.open.rawValue {
            rows.append(("Arrivals started", Format.count(g.started), "", false))
            rows.append(("Dropped at the maxUsers cap", Format.count(g.droppedAtCap), "", g.droppedAtCap > 0))
            rows.append(
                ("Dropped as late (over \(Format.latency(micros: g.dropAfterMicros)))", Format.count(g.droppedLate), "", g.droppedLate > 0))
            rows.append(
                ("Dropped while the generator was saturated", Format.count(g.droppedSaturated), "", g.droppedSaturated > 0))
            rows.append(
                (
                    "Dropped rate", Format.percent(g.droppedRate), "≤ " + Format.percent(g.maxDroppedRate),
                    g.dropped > 0 && g.droppedRate > g.maxDroppedRate
                ))
        }
        if let cpu = g.cpuSeconds {
            rows.append(
                (
                    "Process CPU", Format.duration(seconds: cpu) + (g.cpuShare.map { " (" + Format.percent($0) + " of all cores)" } ?? ""),
                    "", false
                ))
        }
        var out = """
            <section>
            <h2>Generator health</h2>
            <p class="hint\(g.keptSchedule ? "" : " bad")">\(g.keptSchedule
                ? "The generator kept its schedule: lag is when a flow or wake-up started after it was due."
                : "The generator fell behind its schedule: see the banner at the top.")</p>
            <div class="table-wrap"><table class="numbers">
            <thead><tr><th class="text">Figure</th><th>Measured</th><th>Limit</th></tr></thead>
            <tbody>

            """
        for (label, value, limit, bad) in rows {
            out +=
                "<tr><td class=\"text\">\(Format.html(label))</td><td\(bad ? " class=\"bad\"" : "")>\(value)</td><td>\(limit)</td></tr>\n"
        }
        out += "</tbody></table></div>\n"
        if r.timeseries.contains(where: { $0.maxScheduleLagMicros != nil }) {
            out += "<figure class=\"chart-box\">\n\(generatorChart(r).render())\n</figure>\n"
        }
        return out + "</section>\n"
    }

    /// The latest start per interval (ms), and for the open model the arrivals dropped per interval.
    static func generatorChart(_ r: RunResult) -> LineChart {
        var chart = LineChart(title: "Schedule lag and dropped arrivals per interval", yLabel: "ms / arrivals")
        if let first = r.timeseries.first, let last = r.timeseries.last {
            chart.xDomain = (first.startSeconds, last.startSeconds + r.intervalSeconds)
        }
        chart.series = [
            ChartSeries(
                name: "max lag (ms)", color: percentileColors.p99,
                points: r.timeseries.map { ($0.startSeconds, $0.maxScheduleLagMicros.map { Double($0) / 1000 }) },
                reduction: .max)
        ]
        if r.generator?.model == LoadModel.open.rawValue {
            chart.series.append(
                ChartSeries(
                    name: "dropped arrivals", color: errorColor,
                    points: r.timeseries.map { ($0.startSeconds, Double($0.droppedArrivals ?? 0)) }, reduction: .max))
        }
        return chart
    }
}
