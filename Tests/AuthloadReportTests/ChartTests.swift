import Testing

@testable import AuthloadReport

@Suite("Chart building blocks")
struct ChartTests {
    @Test(
        "nice numbers are 1, 2 or 5 times a power of ten",
        arguments: [
            (0.7, false, 1.0), (1.0, false, 1.0), (1.2, false, 2.0), (3.0, false, 5.0), (7.0, false, 10.0),
            (103.0, false, 200.0), (0.032, false, 0.05), (1.4, true, 1.0), (2.9, true, 2.0), (6.9, true, 5.0),
            (7.0, true, 10.0), (40.0, true, 50.0)
        ])
    func niceNumbers(value: Double, round: Bool, expected: Double) {
        #expect(abs(AxisScale.niceNumber(value, round: round) - expected) < 1e-12)
    }

    @Test("a value axis starts at zero and ends on a round tick above the maximum")
    func fromZero() {
        let scale = AxisScale.fromZero(to: 103)
        #expect(scale.lower == 0 && scale.upper == 150)
        #expect(scale.ticks.map(\.label) == ["0", "50", "100", "150"])
        let thousands = AxisScale.fromZero(to: 12_345)
        #expect(thousands.ticks.last?.label == "15,000")
        let small = AxisScale.fromZero(to: 0.37)
        #expect(small.ticks.map(\.label) == ["0.0", "0.1", "0.2", "0.3", "0.4"])
    }

    @Test("an all-zero, empty or non-finite maximum still gives a 0 to 1 axis", arguments: [0.0, -3, .nan, .infinity])
    func degenerateValueAxis(maximum: Double) {
        let scale = AxisScale.fromZero(to: maximum)
        #expect(scale.lower == 0 && scale.upper == 1)
        #expect(scale.ticks.first?.label == "0.0" && scale.ticks.last?.label == "1.0")
    }

    @Test(
        "elapsed-time ticks fall on seconds, minutes or hours, labelled to match",
        arguments: [
            (0.0, 58.0, ["0 s", "10 s", "20 s", "30 s", "40 s", "50 s"], ""),
            (0.0, 600.0, ["0:00", "2:00", "4:00", "6:00", "8:00", "10:00"], "m:ss"),
            (0.0, 86_400.0, ["0:00", "3:00", "6:00", "9:00", "12:00", "15:00", "18:00", "21:00", "24:00"], "h:mm")
        ])
    func elapsed(lower: Double, upper: Double, labels: [String], hint: String) {
        let scale = AxisScale.elapsed(lower, upper)
        #expect(scale.ticks.map(\.label) == labels)
        #expect(scale.hint == hint)
    }

    @Test("a logarithmic axis runs from power of ten to power of ten, each decade the same height, zero on its floor")
    func logarithmicAxis() {
        let scale = AxisScale.logarithmic(0.2, 30_005)
        #expect(scale.lower == 0.1 && scale.upper == 100_000)
        #expect(scale.ticks.map(\.label) == ["0.1", "1", "10", "100", "1,000", "10,000", "100,000"])
        let decade = scale.position(10, from: 0, to: 600) - scale.position(1, from: 0, to: 600)
        #expect(abs(decade - 100) < 1e-9)
        #expect(abs(scale.position(1_000, from: 0, to: 600) - scale.position(100, from: 0, to: 600) - decade) < 1e-9)
        #expect(scale.position(0, from: 0, to: 600) == 0)
        #expect(scale.position(1e9, from: 0, to: 600) == 600)
        let flat = AxisScale.logarithmic(5, 5)
        #expect(flat.lower == 1 && flat.upper == 10)
    }

    @Test("a legend too long for one row wraps, and the chart grows by the rows it added")
    func legendWraps() throws {
        var chart = LineChart(title: "gccs", yLabel: "ms")
        chart.series = (0..<24).map { ChartSeries(name: "CompleteVerificationOfNodes \($0)", color: "#000", points: [(0, 1), (1, 2)]) }
        let svg = chart.render()
        let rows = Set(svg.matches(of: /<text class="legend" x="[0-9.]+" y="([0-9.]+)"/).map { String($0.1) })
        #expect(rows.count > 1, "several legend rows")
        let viewBox = try #require(svg.firstMatch(of: /viewBox="0 0 960 ([0-9.]+)"/))
        #expect(Double(String(viewBox.1)) == 300 + 20 * Double(rows.count - 1))
        let xs = svg.matches(of: /<text class="legend" x="([0-9.]+)"/).compactMap { Double(String($0.1)) }
        #expect(xs.allSatisfy { $0 < 960 }, "no entry starts past the chart's edge")
    }

    @Test("a single point gets an axis around it rather than a zero-width one")
    func singlePointAxis() {
        let scale = AxisScale.elapsed(0, 0)
        #expect(scale.upper > scale.lower)
        #expect(scale.position(0, from: 0, to: 100).isFinite)
        let later = AxisScale.linear(30, 30)
        #expect(later.lower < 30 && later.upper > 30)
    }

    @Test("percentile labels follow the 1/(1-p) decades")
    func percentileLabels() {
        #expect((0...5).map(HTMLReport.percentileLabel) == ["0%", "90%", "99%", "99.9%", "99.99%", "99.999%"])
    }

    @Test("percentiles on either a 0-100 or a 0-1 scale map to the same decades, 100 % to the right edge")
    func distributionPoints() {
        let hundred = HTMLReport.distributionPoints([(0, 1000), (90, 2000), (99.9, 3000), (100, 9000)], decades: 4)
        let one = HTMLReport.distributionPoints([(0, 1000), (0.9, 2000), (0.999, 3000), (1, 9000)], decades: 4)
        for (a, b) in zip(hundred, one) {
            #expect(abs(a.x - b.x) < 1e-9 && a.y == b.y)
        }
        #expect(hundred.map { ($0.x * 1000).rounded() / 1000 } == [0, 1, 3, 4])
        #expect(hundred.last?.y == 9)
    }

    @Test("a chart folds a long series to its point budget, keeping spikes for latencies")
    func downsampling() {
        var chart = LineChart(title: "t", yLabel: "ms")
        chart.maxPointsPerSeries = 10
        var points = (0..<1000).map { (x: Double($0), y: Double?(1)) }
        points[555].y = 50
        chart.series = [ChartSeries(name: "p99", color: "#000", points: points, reduction: .max)]
        let svg = chart.render()
        let polyline = svg.components(separatedBy: "points=\"")[1].components(separatedBy: "\"")[0]
        #expect(polyline.split(separator: " ").count == 10)
        // The spike is the chart's maximum, so it sits on the top edge of the plot area.
        #expect(polyline.contains(",64"))
    }

    @Test("gaps split a line, and lone points between gaps become dots")
    func gaps() {
        var chart = LineChart(title: "t", yLabel: "ms")
        chart.series = [
            ChartSeries(
                name: "p50", color: "#000",
                points: [(0, 1), (1, 2), (2, nil), (3, 3), (4, nil), (5, 1), (6, .nan), (7, 2)])
        ]
        let svg = chart.render()
        #expect(svg.components(separatedBy: "<polyline").count - 1 == 1)
        #expect(svg.components(separatedBy: "<circle").count - 1 == 3)
    }
}
