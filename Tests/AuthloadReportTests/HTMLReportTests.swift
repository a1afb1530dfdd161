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
        #expect(html.components(separatedBy: "<svg").count - 1 == 3 + ModelFlows.count(edge.result))
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
        #expect(html.contains("Latency by percentile"))
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

    // MARK: Helpers

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
}
