import AuthloadCore
import Foundation

extension HTMLReport {
    /// A restrained palette (Tableau 10) that stays apart for the colour-blind and in greyscale print.
    static let palette = [
        "#4c78a8", "#f58518", "#54a24b", "#b279a2", "#e45756", "#72b7b2", "#9d755d", "#eeca3b", "#ff9da6", "#79706e"
    ]
    static let requestColor = "#4c78a8"
    static let errorColor = "#e45756"
    static let userColor = "#54a24b"
    static let percentileColors = (p50: "#4c78a8", p90: "#f58518", p99: "#b279a2")

    static func charts(_ m: ReportModel) -> String {
        var out = "<section>\n<h2>Throughput and users</h2>\n"
        out += figure(throughputChart(m).render())
        out += figure(usersChart(m).render())
        out += "</section>\n<section>\n<h2>Latency over time</h2>\n"
        out += "<p class=\"hint\">Latency per interval of each flow as a whole and of each of its steps, in "
        out += "milliseconds, by the interval in which the sample started. Gaps are intervals without samples.</p>\n"
        if m.flows.isEmpty {
            var empty = LineChart(title: "Latency", yLabel: "ms")
            empty.xDomain = m.timeRange
            out += figure(empty.render())
        } else {
            out += "<div class=\"chart-grid\">\n"
            for flow in m.flows {
                let steps = m.result.metrics.filter { $0.id.flow == flow && $0.id.step != nil && $0.count > 0 }.map(\.id)
                for id in [MetricID(flow: flow, step: nil)] + steps {
                    out += figure(latencyChart(m, id: id).render())
                }
            }
            out += "</div>\n"
        }
        out += "</section>\n<section>\n<h2>Latency distribution</h2>\n"
        out += "<p class=\"hint\">Latency of each flow and its steps over the whole run by percentile, one chart per flow. "
        out += "The horizontal axis stretches the tail: each step to the right is ten times rarer. The vertical axis is "
        out += "logarithmic, each gridline ten times the one below, so a flow that holds a session for seconds and its "
        out += "millisecond requests can be read on one chart.</p>\n"
        let (charts, problems) = distributionCharts(m)
        for chart in charts { out += figure(chart.render()) }
        for problem in problems {
            out += "<p class=\"hint bad\">\(Format.html(problem))</p>\n"
        }
        out += "</section>\n"
        return out
    }

    /// (a) Requests and errors per second, summed over steps (a flow row would count its steps twice).
    static func throughputChart(_ m: ReportModel) -> LineChart {
        let seconds = m.result.intervalSeconds > 0 ? m.result.intervalSeconds : 1
        var requests: [(x: Double, y: Double?)] = []
        var errors: [(x: Double, y: Double?)] = []
        for row in m.result.timeseries {
            let counted = row.metrics.filter { m.isRequest($0.id) }
            // A merged row of a long run covers several intervals: its rate is over all of them.
            let span = seconds * Double(row.intervals)
            requests.append((row.startSeconds, Double(counted.reduce(0) { $0 + $1.count }) / span))
            errors.append((row.startSeconds, Double(counted.reduce(0) { $0 + $1.errors }) / span))
        }
        var chart = LineChart(title: "Requests and errors per second", yLabel: "per second")
        chart.xDomain = m.timeRange
        chart.series = [
            ChartSeries(name: "requests/s", color: requestColor, points: requests),
            ChartSeries(name: "errors/s", color: errorColor, points: errors, reduction: .max)
        ]
        return chart
    }

    /// (b) Virtual users alive at the end of each interval.
    static func usersChart(_ m: ReportModel) -> LineChart {
        var chart = LineChart(title: "Active users", yLabel: "users")
        chart.xDomain = m.timeRange
        chart.height = 260
        chart.series = [
            ChartSeries(
                name: "active users", color: userColor,
                points: m.result.timeseries.map { ($0.startSeconds, Double($0.activeUsers)) })
        ]
        return chart
    }

    /// (c) p50, p90 and p99 of one series (a whole flow or one step), interval by interval.
    static func latencyChart(_ m: ReportModel, id: MetricID) -> LineChart {
        var p50: [(x: Double, y: Double?)] = []
        var p90: [(x: Double, y: Double?)] = []
        var p99: [(x: Double, y: Double?)] = []
        for row in m.result.timeseries {
            let metric = row.metrics.first { $0.id == id && $0.count > 0 }
            p50.append((row.startSeconds, metric.map { Double($0.p50Micros) / 1000 }))
            p90.append((row.startSeconds, metric.map { Double($0.p90Micros) / 1000 }))
            p99.append((row.startSeconds, metric.map { Double($0.p99Micros) / 1000 }))
        }
        let colors = percentileColors
        var chart = LineChart(title: id.step.map { "\(id.flow) · \($0) latency" } ?? "\(id.flow) latency (whole flow)", yLabel: "ms")
        chart.width = 600
        chart.compact = true
        // The whole run, not just this flow's samples, so the per-flow charts line up with each other.
        chart.xDomain = m.timeRange
        chart.series = [
            ChartSeries(name: "p50", color: colors.p50, points: p50, reduction: .max),
            ChartSeries(name: "p90", color: colors.p90, points: p90, reduction: .max),
            ChartSeries(name: "p99", color: colors.p99, points: p99, reduction: .max)
        ]
        chart.emptyMessage = emptyLatencyMessage(m, id: id)
        return chart
    }

    /// Why a latency chart has nothing to draw. A series the run did measure has no per-interval figures when every
    /// sample outlasted the time the time series waits for an interval (a held session): say so in the chart,
    /// beside a table that counts them.
    static func emptyLatencyMessage(_ m: ReportModel, id: MetricID) -> String {
        // Without any interval rows (a result written before they were kept) nothing outlasted anything.
        guard let summary = m.result.metrics.first(where: { $0.id == id }), summary.count > 0, !m.result.timeseries.isEmpty else {
            return "No samples"
        }
        let what = id.step == nil ? "iteration" : "sample"
        return "No per-interval figures: each of the \(Format.count(summary.count)) \(what)s\n"
            + "outlasted the wait of the time series for its interval,\n"
            + "as a held session does. They count in the table and\n"
            + "in the latency distribution below."
    }

    /// (d) Each flow's cumulative histograms, the flow's and its steps', as latency against percentile on a
    /// 1/(1−p) axis: one chart per flow, latency on a logarithmic axis.
    ///
    /// A flow that holds a session lasts seconds while its requests take milliseconds; on one linear axis the
    /// requests would lie flat on zero, and all flows on one chart would be more lines than a legend can tell apart.
    ///
    /// Returns the charts and a sentence for every series whose histogram could not be read, so a bad
    /// histogram costs one line on the plot, not the whole report.
    static func distributionCharts(_ m: ReportModel) -> ([LineChart], [String]) {
        var problems: [String] = []
        var curves: [(id: MetricID, points: [(percentile: Double, value: Int)], count: Int)] = []
        for summary in m.result.metrics where summary.count > 0 {
            do {
                let histogram = try Histogram(serialized: summary.histogram)
                guard histogram.totalCount > 0 else { continue }
                curves.append((summary.id, histogram.percentileDistribution(), histogram.totalCount))
            } catch {
                problems.append("The histogram of \(summary.id) could not be read (\(error)); it is not plotted.")
            }
        }
        // Show the tail as far as the largest sample count can resolve it, from 99.99 % up to 99.9999 %.
        let largest = curves.map(\.count).max() ?? 0
        let decades = largest > 0 ? Swift.max(4, Swift.min(6, Int(log10(Double(largest))))) : 4
        func chart(_ title: String) -> LineChart {
            var chart = LineChart(title: title, yLabel: "ms (log scale)")
            chart.xLabel = "percentile"
            chart.xAxis = .custom(
                lower: 0, upper: Double(decades),
                ticks: (0...decades).map {
                    AxisScale.Tick(value: Double($0), label: percentileLabel(decades: $0))
                })
            chart.yAxis = .logarithmic
            chart.emptyMessage = "No histograms to plot"
            return chart
        }
        let flows = m.flows.filter { flow in curves.contains { $0.id.flow == flow } }
        guard !flows.isEmpty else { return ([chart("Latency by percentile")], problems) }
        let charts = flows.map { flow in
            var perFlow = chart("\(flow): latency by percentile")
            perFlow.series = curves.filter { $0.id.flow == flow }.enumerated().map { i, curve in
                ChartSeries(
                    name: curve.id.step ?? "\(flow) (whole flow)", color: palette[i % palette.count],
                    points: distributionPoints(curve.points, decades: decades), reduction: .max,
                    dashed: i / palette.count % 2 == 1)
            }
            return perFlow
        }
        return (charts, problems)
    }

    /// Maps percentiles onto log10(1/(1−p)), clamping the last ones (p → 100 %) to the right edge.
    ///
    /// Percentiles may come as 0…100 (HdrHistogram's convention) or as 0…1: a distribution always ends at
    /// its maximum, so a largest percentile above 1 means the former.
    static func distributionPoints(_ points: [(percentile: Double, value: Int)], decades: Int)
        -> [(x: Double, y: Double?)]
    {
        let scale = (points.map(\.percentile).max() ?? 0) > 1 ? 100.0 : 1.0
        let floor = pow(10, -Double(decades))
        return points.compactMap { point in
            guard point.percentile.isFinite else { return nil }
            let p = Swift.min(Swift.max(point.percentile / scale, 0), 1)
            let x = Swift.min(log10(1 / Swift.max(1 - p, floor)), Double(decades))
            return (x, Double(point.value) / 1000)
        }
    }

    /// `0%`, `90%`, `99%`, `99.9%` … for 0, 1, 2, 3 … decades of 1/(1−p).
    static func percentileLabel(decades: Int) -> String {
        switch decades {
        case 0: return "0%"
        case 1: return "90%"
        case 2: return "99%"
        default: return "99." + String(repeating: "9", count: decades - 2) + "%"
        }
    }

    private static func figure(_ svg: String) -> String { "<figure class=\"chart-box\">\n\(svg)\n</figure>\n" }
}
