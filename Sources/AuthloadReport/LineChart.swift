/// One named line on a chart.
struct ChartSeries {
    /// How to fold many points into one when a series has more points than the chart has pixels.
    enum Reduction {
        /// Average of the bucket: right for rates and user counts.
        case mean
        /// Worst value of the bucket: right for latencies, where a spike must stay visible.
        case max
    }

    var name: String
    /// A CSS colour.
    var color: String
    /// Points in x order; a `nil` y breaks the line (e.g. an interval in which the flow had no samples).
    var points: [(x: Double, y: Double?)]
    var reduction = Reduction.mean
    /// Drawn dashed: tells apart two series that share a colour once a chart has more series than the palette.
    var dashed = false
}

/// A small SVG line-chart builder: a title, a legend, a y axis from zero and an x axis of the caller's choice.
///
/// Output is SVG for inlining in HTML (so no `xmlns`), with no scripts and no external references.
/// Whatever the input — no series, no points, one point, all zeros, NaN or infinity in the data — every
/// number written is finite, so the file never holds `NaN` or `inf`.
///
/// ```swift
/// var chart = LineChart(title: "Active users", yLabel: "users")
/// chart.series = [ChartSeries(name: "users", color: "#4c78a8", points: [(0, 10), (1, 20)])]
/// let svg = chart.render()
/// ```
struct LineChart {
    /// How the horizontal axis is laid out.
    enum XAxis {
        /// Seconds since the start of the run, with clock-style labels.
        case elapsed
        /// A plain linear scale with round ticks.
        case linear
        /// A fixed range and hand-placed ticks (e.g. the percentile plot's 90 %, 99 %, 99.9 %).
        case custom(lower: Double, upper: Double, ticks: [AxisScale.Tick])
    }

    /// How the vertical axis is laid out.
    enum YAxis {
        /// Linear from zero: rates, counts, and latencies of one kind.
        case fromZero
        /// Powers of ten (``AxisScale/logarithmic(_:_:)``): latencies that differ by orders of magnitude.
        case logarithmic
    }

    var title: String
    var yLabel: String
    var xLabel = "elapsed"
    var xAxis = XAxis.elapsed
    var yAxis = YAxis.fromZero
    var series: [ChartSeries] = []
    /// The x range to show, when it should not be the data's own (e.g. the whole run, so charts line up).
    var xDomain: (lower: Double, upper: Double)?
    /// Larger text for charts drawn at half width, where the browser scales everything down.
    var compact = false
    /// Shown in the plot area when there is nothing to draw; each line (`\n`) centred under the one before.
    var emptyMessage = "No data"
    var width = 960.0
    var height = 300.0
    /// More points than this (or than the plot is wide) are folded, so a 24-hour soak stays a small file.
    var maxPointsPerSeries = 1200

    init(title: String, yLabel: String) {
        self.title = title
        self.yLabel = yLabel
    }

    private var plotLeft: Double { 72 }
    private var plotRight: Double { width - 24 }
    /// Below the title and every row of the legend.
    private var plotTop: Double { 64 + legendRowHeight * Double(legendLayout.rows - 1) }
    private var plotBottom: Double { totalHeight - 48 }
    /// `height`, grown by the legend rows past the first, so the plot keeps its size however long the legend.
    private var totalHeight: Double { height + legendRowHeight * Double(legendLayout.rows - 1) }
    private let legendRowHeight = 20.0

    /// The chart as an `<svg>` element, sized to its container's width.
    func render() -> String {
        let lines = series.map { s in (s, clean(s)) }
        let ys = lines.flatMap { $0.1.compactMap(\.y) }
        let xs = lines.flatMap { $0.1.filter { $0.y != nil }.map(\.x) }
        let yScale: AxisScale
        switch yAxis {
        case .fromZero: yScale = .fromZero(to: ys.max() ?? 0)
        case .logarithmic: yScale = .logarithmic(ys.filter { $0 > 0 }.min() ?? 1, ys.max() ?? 1)
        }
        let xRange = xDomain ?? (xs.min() ?? 0, xs.max() ?? 0)
        let xScale: AxisScale
        switch xAxis {
        case .elapsed: xScale = .elapsed(xRange.lower, xRange.upper)
        case .linear: xScale = .linear(xRange.lower, xRange.upper)
        case .custom(let lower, let upper, let ticks): xScale = AxisScale(lower: lower, upper: upper, ticks: ticks)
        }

        var svg = """
            <svg class="chart\(compact ? " compact" : "")" viewBox="0 0 \(n(width)) \(n(totalHeight))" role="img" \
            preserveAspectRatio="xMidYMid meet">
            <title>\(Format.html(title))</title>
            <text class="chart-title" x="\(n(plotLeft))" y="22">\(Format.html(title))</text>

            """
        svg += legend()
        svg += axes(x: xScale, y: yScale)
        if ys.isEmpty {
            let messageLines = emptyMessage.split(separator: "\n", omittingEmptySubsequences: false)
            let first = (plotTop + plotBottom) / 2 - Double(messageLines.count - 1) * 10
            for (index, line) in messageLines.enumerated() {
                svg += """
                    <text class="chart-empty" x="\(n((plotLeft + plotRight) / 2))" \
                    y="\(n(first + Double(index) * 20))" text-anchor="middle">\(Format.html(String(line)))</text>

                    """
            }
        }
        for (s, points) in lines {
            svg += draw(points, of: s, x: xScale, y: yScale)
        }
        svg += "</svg>"
        return svg
    }

    // MARK: Parts

    /// Where each legend entry goes: entries flow left to right and wrap onto a new row before the plot's right edge.
    private var legendLayout: (positions: [(x: Double, row: Int)], rows: Int) {
        // An estimate is enough: legend labels are short and the font is the system sans-serif.
        let charWidth = compact ? 8.5 : 7
        var positions: [(x: Double, row: Int)] = []
        var x = plotLeft
        var row = 0
        for s in series {
            let entryWidth = 24 + Double(s.name.count) * charWidth
            if x > plotLeft, x + entryWidth > plotRight {
                x = plotLeft
                row += 1
            }
            positions.append((x, row))
            x += entryWidth + 22
        }
        return (positions, row + 1)
    }

    private func legend() -> String {
        var out = ""
        for (s, place) in zip(series, legendLayout.positions) {
            let x = place.x
            let y = 44.0 + legendRowHeight * Double(place.row)
            out += """
                <line x1="\(n(x))" y1="\(n(y - 4))" x2="\(n(x + 18))" y2="\(n(y - 4))" stroke="\(s.color)" \
                stroke-width="2.5"\(s.dashed ? " stroke-dasharray=\"5 3\"" : "")/>\
                <text class="legend" x="\(n(x + 24))" y="\(n(y))">\(Format.html(s.name))</text>

                """
        }
        return out
    }

    private func axes(x: AxisScale, y: AxisScale) -> String {
        var out = "<g class=\"axis\">\n"
        for tick in y.ticks {
            let py = y.position(tick.value, from: plotBottom, to: plotTop)
            out += """
                <line class="grid" x1="\(n(plotLeft))" y1="\(n(py))" x2="\(n(plotRight))" y2="\(n(py))"/>\
                <text x="\(n(plotLeft - 8))" y="\(n(py + 4))" text-anchor="end">\(Format.html(tick.label))</text>

                """
        }
        for tick in x.ticks {
            let px = x.position(tick.value, from: plotLeft, to: plotRight)
            out += """
                <line class="tick" x1="\(n(px))" y1="\(n(plotBottom))" x2="\(n(px))" y2="\(n(plotBottom + 5))"/>\
                <text x="\(n(px))" y="\(n(plotBottom + 19))" text-anchor="middle">\(Format.html(tick.label))</text>

                """
        }
        let xCaption = x.hint.isEmpty ? xLabel : "\(xLabel) (\(x.hint))"
        let midY = (plotTop + plotBottom) / 2
        out += """
            <line class="baseline" x1="\(n(plotLeft))" y1="\(n(plotBottom))" x2="\(n(plotRight))" y2="\(n(plotBottom))"/>
            <line class="baseline" x1="\(n(plotLeft))" y1="\(n(plotTop))" x2="\(n(plotLeft))" y2="\(n(plotBottom))"/>
            <text class="axis-label" x="\(n((plotLeft + plotRight) / 2))" y="\(n(totalHeight - 8))" \
            text-anchor="middle">\(Format.html(xCaption))</text>
            <text class="axis-label" transform="translate(16 \(n(midY))) rotate(-90)" \
            text-anchor="middle">\(Format.html(yLabel))</text>
            </g>

            """
        return out
    }

    private func draw(_ points: [(x: Double, y: Double?)], of s: ChartSeries, x: AxisScale, y: AxisScale) -> String {
        var out = ""
        for segment in segments(points) {
            let coords = segment.map { p in
                (x.position(p.x, from: plotLeft, to: plotRight), y.position(p.y, from: plotBottom, to: plotTop))
            }
            if coords.count == 1 {
                // A lone point (one interval, or one between gaps) would be invisible as a polyline.
                out += "<circle cx=\"\(n(coords[0].0))\" cy=\"\(n(coords[0].1))\" r=\"3\" fill=\"\(s.color)\"/>\n"
            } else {
                let list = coords.map { "\(n($0.0)),\(n($0.1))" }.joined(separator: " ")
                let dash = s.dashed ? " stroke-dasharray=\"6 4\"" : ""
                out += "<polyline class=\"line\" points=\"\(list)\" stroke=\"\(s.color)\"\(dash)/>\n"
            }
        }
        return out
    }

    // MARK: Data preparation

    /// Drops non-finite values (they become gaps) and folds long series down to the pixel budget.
    private func clean(_ s: ChartSeries) -> [(x: Double, y: Double?)] {
        let finite = s.points.compactMap { p -> (x: Double, y: Double?)? in
            guard p.x.isFinite else { return nil }
            return (p.x, p.y.flatMap { $0.isFinite ? $0 : nil })
        }
        // Never more points than the plot is wide: extra ones only overdraw each other.
        let budget = Swift.max(1, Swift.min(maxPointsPerSeries, Int(plotRight - plotLeft)))
        guard finite.count > budget else { return finite }
        let size = (finite.count + budget - 1) / budget
        return stride(from: 0, to: finite.count, by: size).map { start in
            let bucket = finite[start..<Swift.min(start + size, finite.count)]
            let values = bucket.compactMap(\.y)
            guard !values.isEmpty else { return (bucket.first!.x, nil) }
            switch s.reduction {
            case .mean: return (bucket.first!.x, values.reduce(0, +) / Double(values.count))
            case .max: return (bucket.first!.x, values.max())
            }
        }
    }

    /// Splits at gaps into runs of points that all have a value.
    private func segments(_ points: [(x: Double, y: Double?)]) -> [[(x: Double, y: Double)]] {
        var out: [[(x: Double, y: Double)]] = []
        var current: [(x: Double, y: Double)] = []
        for p in points {
            if let y = p.y {
                current.append((p.x, y))
            } else if !current.isEmpty {
                out.append(current)
                current = []
            }
        }
        if !current.isEmpty { out.append(current) }
        return out
    }

    /// A coordinate with one decimal; never `nan` or `inf`, because a single one would break the whole SVG.
    private func n(_ value: Double) -> String {
        let text = Format.fixed(value, decimals: 1)
        guard !text.isEmpty else { return "0" }
        return text.hasSuffix(".0") ? String(text.dropLast(2)) : text
    }
}
