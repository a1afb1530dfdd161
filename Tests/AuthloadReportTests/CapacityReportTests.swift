import AuthloadCore
import Foundation
import Testing

@testable import AuthloadReport

@Suite("Capacity and generator sections")
struct CapacityReportTests {
    static func stage(_ number: Int, _ target: Double, flows: Int, errors: Int = 0, p99: Int, failed: [String] = []) -> StageResult {
        StageResult(
            number: number, from: target, target: target, startSeconds: Double(number), endSeconds: Double(number + 1),
            flows: flows, errors: errors, throughput: Double(flows - errors), p50Micros: p99 / 2, p99Micros: p99,
            failedThresholds: failed)
    }

    /// A staged open-model run: 100 and 200/s inside the SLO, 300/s past it, 400/s with no samples at all;
    /// and a generator that dropped arrivals.
    static var result: RunResult {
        var r = Fixtures.run()
        r.capacity = CapacityReport(
            unit: "arrivals/s",
            stages: [
                stage(1, 100, flows: 100, p99: 10_000), stage(3, 200, flows: 200, p99: 11_000),
                stage(5, 300, flows: 300, errors: 30, p99: 90_000, failed: ["login p99 ≤ 50ms"]),
                stage(7, 400, flows: 0, p99: 0, failed: ["login p99 ≤ 50ms"])
            ], judged: true)
        var generator = GeneratorReport(
            model: "open", started: 570, droppedAtCap: 0, droppedLate: 30, lagSamples: 600,
            lagHistogram: Fixtures.histogram([100, 2_000_000]),
            lagP50Micros: 100, lagP99Micros: 1_900_000, lagMaxMicros: 2_000_000, maxLagP99Micros: 100_000, maxDroppedRate: 0.01,
            dropAfterMicros: 1_000_000)
        generator.problems = ["30 of 600 arrivals dropped"]
        generator.cpuSeconds = 1.5
        generator.cpuShare = 0.25
        r.generator = generator
        r.timeseries[1].droppedArrivals = 30
        r.timeseries[1].maxScheduleLagMicros = 2_000_000
        return r
    }

    @Test("the capacity section names the last stage inside the SLO and the knee, with finite charts")
    func capacitySection() throws {
        let r = Self.result
        let capacity = try #require(r.capacity)
        #expect(capacity.lastPassingStage == 1)
        #expect(capacity.kneeStage == 2, "300/s is the first stage over twice the first stage's p99")
        let html = HTMLReport.render(r)
        #expect(html.contains("Last stage inside the SLO (every threshold met): <strong>200 arrivals/s</strong>."))
        #expect(html.contains("Knee (p99 above 2× the first stage's): <strong>300 arrivals/s</strong>."))
        #expect(html.contains("<td class=\"text\">200 <strong>(last inside the SLO)</strong></td>"))
        #expect(!html.contains("NaN"))
        for text in HTMLReportTests.svgNumbers(html) {
            #expect(Double(text)?.isFinite == true, "\(text)")
        }
    }

    @Test("the generator banner comes first, and its section lists the figures against their limits")
    func generatorSection() {
        let html = HTMLReport.render(Self.result)
        let banner = html.range(of: "generator-bad")
        let header = html.range(of: "</header>")
        #expect(banner != nil && header != nil && banner!.lowerBound > header!.upperBound)
        #expect(html.range(of: "generator-bad")!.lowerBound < html.range(of: "<h2>Thresholds</h2>")?.lowerBound ?? html.endIndex)
        #expect(html.contains("<li>30 of 600 arrivals dropped</li>"))
        #expect(html.contains("Dropped as late (over 1,000 ms)"))
        #expect(html.contains("Schedule lag and dropped arrivals per interval"))
    }

    @Test("capacity.csv has a row per stage, marks the last stage inside the SLO and the knee, and leaves figures of an empty stage blank")
    func capacityCSV() throws {
        let csv = try #require(CSVWriter.capacity(Self.result))
        let rows = csv.split(separator: "\r\n").map { $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init) }
        #expect(rows.first == CSVWriter.capacityHeader)
        #expect(rows.count == 5)
        #expect(rows.allSatisfy { $0.count == CSVWriter.capacityHeader.count })
        #expect(rows[2][14] == "true" && rows[3][15] == "true")
        #expect(rows[4][10] == "" && rows[4][11] == "", "no samples, no percentiles")
        #expect(CSVWriter.capacity(Fixtures.run()) == nil, "a run without stages has no capacity.csv")
    }
}
