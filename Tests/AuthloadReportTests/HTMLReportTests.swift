import AuthloadCore
import Foundation
import Testing

@testable import AuthloadReport

@Suite("HTML report")
struct HTMLReportTests {
    @Test("names every flow and step")
    func flowAndStepNames() {
        let html = HTMLReport.render(Fixtures.run())
        for name in ["login", "authenticate", "logout", "mfa", "verify"] {
            #expect(html.contains(">\(name)<"), "\(name)")
        }
        #expect(html.contains("login latency"))
        #expect(html.contains("mfa latency"))
    }

    @Test("shows the header facts with numbers formatted for people")
    func header() {
        let html = HTMLReport.render(Fixtures.run())
        for fact in [
            "staging-nightly", "2025-01-01T02:00:00Z", "ci-runner-7", "https://auth.staging.example.com",
            "0.1.0", "10.0 s", "280 req", "28.0 req/s", ">237<", "status-completed"
        ] {
            #expect(html.contains(fact), "\(fact)")
        }
    }

    @Test("the header gives HTTP requests by protocol, with those that got no answer, when the result has them")
    func requestsByProtocol() {
        var result = Fixtures.run()
        let flows = result.metrics.indices.filter { result.metrics[$0].id.step == nil }
        let total = flows.reduce(0) { $0 + (result.metrics[$1].httpRequests ?? 0) }
        #expect(!HTMLReport.render(result).contains("<dt>HTTP requests</dt>"), "a result from before the split has none")
        for (n, index) in flows.enumerated() {
            let requests = result.metrics[index].httpRequests ?? 0
            result.metrics[index].httpRequestsByProtocol =
                n == 0 ? RequestsByProtocol(h1: 0, h2: requests - 2) : RequestsByProtocol(h1: requests)
        }
        let h1 = flows.dropFirst().reduce(0) { $0 + (result.metrics[$1].httpRequests ?? 0) }
        let html = HTMLReport.render(result)
        #expect(
            html.contains(
                "<div><dt>HTTP requests</dt><dd>h1 \(Format.count(h1)), h2 \(Format.count(total - h1 - 2)), no answer 2</dd></div>"))
    }

    @Test("the header says how many requests were sent again after an h2 refusal, when any were")
    func resent() {
        var result = Fixtures.run()
        let flows = result.metrics.indices.filter { result.metrics[$0].id.step == nil }
        for index in flows { result.metrics[index].httpResent = 0 }
        #expect(!HTMLReport.render(result).contains("<dt>Sent again</dt>"), "none sent again, nothing said")
        for (n, index) in flows.enumerated() { result.metrics[index].httpResent = 1_000 + n }
        let total = flows.indices.reduce(0) { $0 + 1_000 + $1 }
        #expect(
            HTMLReport.render(result).contains(
                "<div><dt>Sent again</dt><dd>\(Format.count(total)) (h2 REFUSED_STREAM/GOAWAY: not processed, not in the count)</dd></div>")
        )
    }

    @Test("the flows table has a header for every cell of its rows")
    func tableColumns() throws {
        let html = HTMLReport.render(Fixtures.run())
        let table = try #require(html.range(of: "<h2>Flows and steps</h2>").map { html[$0.upperBound...] })
        let head = table[..<(table.range(of: "</thead>")?.lowerBound ?? table.endIndex)]
        let firstRow = try #require(table.range(of: "<tr class=\"flow-row\">").map { table[$0.upperBound...] })
        let row = firstRow[..<(firstRow.range(of: "</tr>")?.lowerBound ?? firstRow.endIndex)]
        // Header cells that span two rows, plus the second row's leaf cells, against one body row's cells.
        let spanning = head.components(separatedBy: "rowspan=\"2\"").count - 1
        let leaves = head.components(separatedBy: "</tr>").dropFirst().joined().components(separatedBy: "<th>").count - 1
        #expect(spanning + leaves == row.components(separatedBy: "<td").count - 1)
        #expect(head.contains("HTTP req"))
    }

    @Test("escapes every user-provided string")
    func escaping() {
        var result = Fixtures.run(name: "<script>alert('x')</script>", notes: ["note <b>&</b>"])
        result.errors[0].detail = "<img onerror=x> & \"quoted\""
        result.metrics[1].id.step = "a<b"
        let html = HTMLReport.render(result)
        #expect(!html.contains("<script"))
        #expect(html.contains("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;"))
        #expect(!html.contains("<img"))
        #expect(html.contains("&lt;img onerror=x&gt; &amp; &quot;quoted&quot;"))
        #expect(html.contains("note &lt;b&gt;&amp;&lt;/b&gt;"))
        #expect(html.contains("a&lt;b"))
        #expect(html.contains("missing &quot;sessionid&quot;, rtCode=7"))
    }

    @Test("refers to nothing on the network and runs no script", arguments: Fixtures.Edge.allCases)
    func selfContained(edge: Fixtures.Edge) {
        let html = HTMLReport.render(edge.result).lowercased()
        for needle in ["src=", "href=", "@import", "url(", "<script", "<link", "xmlns", "http://", "<iframe"] {
            #expect(!html.contains(needle), "\(needle)")
        }
        // The only https:// allowed is the target URL, escaped, in the header.
        #expect(html.components(separatedBy: "https://").count - 1 == 1)
    }

    @Test("writes only finite numbers into its charts", arguments: Fixtures.Edge.allCases)
    func finiteCharts(edge: Fixtures.Edge) throws {
        let html = HTMLReport.render(edge.result)
        #expect(!html.contains("NaN"))
        #expect(html.range(of: #"\b[Ii]nf(inity)?\b"#, options: .regularExpression) == nil)
        let numbers = Self.svgNumbers(html)
        #expect(!numbers.isEmpty)
        for text in numbers {
            let value = try #require(Double(text), "\(text) is not a number")
            #expect(value.isFinite)
        }
        #expect(html.components(separatedBy: "<svg").count - 1 == 2 + ModelFlows.count(edge.result) + ModelFlows.distributions(edge.result))
    }

    @Test("an empty run shows 'No data' in its charts instead of lines")
    func emptyCharts() {
        let html = HTMLReport.render(Fixtures.Edge.nothingAtAll.result)
        #expect(html.contains(">No data<"))
        #expect(html.contains("No histograms to plot"))
        #expect(html.contains("No samples were recorded."))
        #expect(html.contains("No errors were recorded."))
        #expect(!html.contains("<polyline"))
    }

    @Test("a run of one interval draws its points as dots")
    func singleInterval() {
        let html = HTMLReport.render(Fixtures.Edge.oneInterval.result)
        #expect(html.contains("<circle"))
    }

    @Test(
        "an interrupted or failed run opens with a red banner; notes of a completed run are a plain callout",
        arguments: [RunStatus.completed, .interrupted, .failed])
    func banner(status: RunStatus) {
        let html = HTMLReport.render(Fixtures.run(status: status, notes: ["Stopped by SIGINT after 10 s."]))
        #expect(html.contains("Stopped by SIGINT after 10 s."))
        #expect(html.contains("class=\"callout callout-bad\"") == (status != .completed))
        #expect(html.contains("class=\"callout\"") == (status == .completed))
        #expect(html.contains("status-\(status.rawValue)"))
    }

    @Test("an unreadable histogram is reported in one line and the rest of the page still renders")
    func badHistogram() {
        var result = Fixtures.run()
        result.metrics[0].histogram = "garbage"
        let html = HTMLReport.render(result)
        #expect(html.contains("The histogram of login could not be read"))
        #expect(html.contains("login: latency by percentile"), "its steps are still plotted")
    }

    @Test("request totals count steps, not the flow rows that repeat them")
    func totals() {
        let model = ReportModel(Fixtures.run())
        #expect(model.totalRequests == 100 + 97 + 40)
        #expect(model.totalErrors == 2 + 1)
        #expect(model.peakUsers == 10)
        #expect(model.flows == ["login", "mfa"])
    }

    @Test("event series (statuses a server pushed) are shown but never counted as requests")
    func eventsAreNoRequests() {
        var run = Fixtures.run()
        var status = Fixtures.summary("mfa", "CreateChannel", count: 40, errors: 5, base: 300_000)
        status.event = true
        run.metrics.append(status)
        run.timeseries[0].metrics.append(Fixtures.metric("mfa", "CreateChannel", count: 40))
        let model = ReportModel(run)
        #expect(model.totalRequests == 100 + 97 + 40)
        #expect(model.totalErrors == 2 + 1)
        #expect(!model.isRequest(MetricID(flow: "mfa", step: "CreateChannel")))
        #expect(HTMLReport.render(run).contains("CreateChannel"))
    }

    @Test("a flow's gauge peaks are key figures and survive result.json")
    func peaks() throws {
        var run = Fixtures.run()
        run.peaks = [PeakReading(flow: "streem", name: "concurrent refreshes", peak: 97)]
        let html = HTMLReport.render(run)
        #expect(html.contains("<span>Peak concurrent refreshes (streem)</span><strong>97</strong>"))
        let decoded = try JSONDecoder().decode(RunResult.self, from: JSONEncoder().encode(run))
        #expect(decoded.peaks == run.peaks)
    }

    @Test("a flow whose every iteration outlasted the time series' wait says so in its empty chart, not 'No samples'")
    func heldSessionChart() throws {
        var run = Fixtures.run()
        // mfa's iterations all finished late: the totals have them, the interval rows do not.
        run.timeseries = run.timeseries.map { row in
            var row = row
            row.metrics.removeAll { $0.id == MetricID(flow: "mfa", step: nil) }
            return row
        }
        let html = HTMLReport.render(run)
        let chart = try #require(html.range(of: "<title>mfa latency (whole flow)</title>").map { html[$0.upperBound...] })
        let svg = chart[..<(chart.range(of: "</svg>")?.upperBound ?? chart.endIndex)]
        #expect(svg.contains("No per-interval figures: each of the 40 iterations"))
        #expect(svg.contains("as a held session does"))
        #expect(!svg.contains(">No samples<"))
    }

    @Test("the latency distribution is one chart per flow, its steps beside it, on a logarithmic axis")
    func distributionPerFlow() throws {
        var run = Fixtures.run()
        // A 30 s held session beside 8 ms requests: on a linear axis the requests would lie on zero.
        run.metrics[3] = Fixtures.summary("mfa", nil, count: 40, errors: 0, base: 30_000_000)
        run.metrics[4] = Fixtures.summary("mfa", "verify", count: 40, errors: 0, base: 8_000)
        let (charts, problems) = HTMLReport.distributionCharts(ReportModel(run))
        #expect(problems.isEmpty)
        #expect(charts.map(\.title) == ["login: latency by percentile", "mfa: latency by percentile"])
        #expect(charts[1].series.map(\.name) == ["mfa (whole flow)", "verify"])
        let svg = charts[1].render()
        for label in [">10<", ">100<", ">1,000<", ">10,000<", ">100,000<"] { #expect(svg.contains(label), "\(label)") }
        #expect(svg.contains("ms (log scale)"))
    }

    @Test("the flows table of a mixed run, every cell at its widest, fits a 1280 px window without scrolling")
    func tableFitsLaptopWidth() throws {
        let html = HTMLReport.render(Fixtures.mixed())
        let section = try #require(html.range(of: "<h2>Flows and steps</h2>").map { html[$0.upperBound...] })
        let table = section[..<(section.range(of: "</table>")?.lowerBound ?? section.endIndex)]
        let body = try #require(table.range(of: "<tbody>").map { table[$0.upperBound...] })
        // The narrowest each column can be: its widest number, or its longest word where text may wrap.
        var widths: [Double] = []
        for row in body.components(separatedBy: "</tr>") {
            let cells = row.components(separatedBy: "<td").dropFirst().map { cell -> (text: String, wraps: Bool) in
                (Self.text(of: "<td" + cell), cell.hasPrefix(" class=\"text"))
            }
            for (column, cell) in cells.enumerated() {
                let words = cell.wraps ? cell.text.split(separator: " ").map(String.init) : [cell.text]
                let width = words.map(Self.estimatedWidth).max() ?? 0
                if column == widths.count { widths.append(width) } else { widths[column] = max(widths[column], width) }
            }
        }
        #expect(widths.count == 16)
        let layout = HTMLReport.Layout.self
        let padding = Double(2 * layout.cellPadding)
        let needed = widths.reduce(0) { $0 + $1 + padding } + Double(layout.stepIndent)
        // The window, less the page's side padding and a vertical scrollbar.
        let available = Double(min(1280, layout.maxWidth) - 2 * layout.sidePadding - 15)
        #expect(needed <= available, "the table needs \(Int(needed)) px of \(Int(available))")
        let css = HTMLReport.stylesheet
        #expect(css.contains("td.text { white-space: normal; overflow-wrap: anywhere; }"), "names wrap")
        #expect(css.contains("padding: 5px \(layout.cellPadding)px"))
        #expect(css.contains("font-size: \(layout.tableFontSize)px"))
    }

    // MARK: Helpers

    /// A cell's text without its tags and with its entities as the one character they stand for.
    static func text(of cell: String) -> String {
        let stripped = cell.replacingOccurrences(of: "<[^>]*>", with: " ", options: .regularExpression)
        return stripped.replacingOccurrences(of: "&[a-z#0-9]+;", with: "x", options: .regularExpression)
            .split(separator: " ").joined(separator: " ")
    }

    /// Width in pixels at the table's font size, bold, from Helvetica's advance widths (Liberation Sans and
    /// Arial share them): digits and most letters 0.56 em, punctuation and spaces 0.28 em, `%` 0.89 em, the
    /// widest capitals and `m`, `w` 0.83 em.
    static func estimatedWidth(_ text: String) -> Double {
        let em = Double(HTMLReport.Layout.tableFontSize) * 1.05
        return text.reduce(0) { width, character in
            switch character {
            case ".", ",", " ", ":", "'", "i", "l", "j", "f", "t", "I", "(", ")", "/": width + 0.28 * em
            case "%", "m", "w", "M", "W": width + 0.89 * em
            case "A"..."Z": width + 0.72 * em
            default: width + 0.56 * em
            }
        }
    }

    /// Every numeric attribute value inside the SVG charts.
    static func svgNumbers(_ html: String) -> [String] {
        let pattern = #"\b(?:x|y|x1|x2|y1|y2|cx|cy|r|points|viewBox)="([^"]*)""#
        let regex = try! NSRegularExpression(pattern: pattern)
        let ns = html as NSString
        return regex.matches(in: html, range: NSRange(location: 0, length: ns.length)).flatMap { match in
            ns.substring(with: match.range(at: 1)).split(whereSeparator: { $0 == " " || $0 == "," }).map(String.init)
        }
    }
}

/// How many per-flow latency charts a result gets (at least one, even with no flows).
/// Latency-over-time charts: one per flow and one per step that has samples (one empty chart when no flow).
enum ModelFlows {
    static func count(_ result: RunResult) -> Int {
        let flows = ReportModel(result).flows
        let steps = result.metrics.filter { $0.id.step != nil && $0.count > 0 && flows.contains($0.id.flow) }.count
        return max(1, flows.count + steps)
    }

    /// One latency-distribution chart per flow with samples; one empty chart when none has any.
    static func distributions(_ result: RunResult) -> Int {
        max(1, Set(result.metrics.filter { $0.count > 0 }.map(\.id.flow)).count)
    }
}
