import AuthloadCore
import Foundation
import Testing

@testable import AuthloadReport

#if canImport(FoundationXML)
import FoundationXML
#endif

@Suite("junit.xml and the thresholds section")
struct JUnitWriterTests {
    static let held = ThresholdVerdict(
        name: "login p99 ≤ 800ms", metric: "login", path: "thresholds[0]", kind: .percentile,
        bound: 800_000, measured: 512_300, passed: true)
    static let broken = ThresholdVerdict(
        name: "login.logout error rate ≤ 1% (1m windows)", metric: "login.logout", path: "thresholds[1]", kind: .errorRate,
        bound: 0.01, measured: 0.034, windowSeconds: 60, worstWindowStartSeconds: 120, passed: false)

    static func result(_ thresholds: [ThresholdVerdict], status: RunStatus = .completed) -> RunResult {
        var run = Fixtures.run(
            status: status, notes: status == .completed ? [] : ["Stopped early by a signal after 4s: this report is partial."])
        run.thresholds = thresholds
        return run
    }

    /// Parses the XML with Foundation, so malformed output fails here rather than on a CI server.
    static func document(_ text: String) throws -> XMLDocument { try XMLDocument(xmlString: text) }

    @Test("one test case for the run and one per threshold, failures carrying measured value and bound")
    func casesAndFailures() throws {
        let xml = JUnitWriter.render(Self.result([Self.held, Self.broken]))
        let doc = try Self.document(xml)
        let cases = try doc.nodes(forXPath: "//testcase")
        #expect(cases.count == 3)
        let suite = try #require(try doc.nodes(forXPath: "//testsuite").first as? XMLElement)
        #expect(suite.attribute(forName: "tests")?.stringValue == "3")
        #expect(suite.attribute(forName: "failures")?.stringValue == "1")
        let failures = try doc.nodes(forXPath: "//testcase/failure") as? [XMLElement] ?? []
        #expect(failures.count == 1)
        let failure = try #require(failures.first)
        #expect((failure.parent as? XMLElement)?.attribute(forName: "name")?.stringValue == "login.logout error rate ≤ 1% (1m windows)")
        #expect(failure.attribute(forName: "message")?.stringValue == "measured 3.40% in the window from 120 s; bound 1.00%")
        #expect(xml.contains("measured 512.3ms; bound 800.0ms"))
    }

    @Test("an interrupted run fails its run test case even when every threshold held")
    func interruptedRunFails() throws {
        let doc = try Self.document(JUnitWriter.render(Self.result([Self.held], status: .interrupted)))
        let failures = try doc.nodes(forXPath: "//testcase[@name='run interrupted']/failure")
        #expect(failures.count == 1)
    }

    @Test("a run rebuilt from its last checkpoint is interrupted at that checkpoint's time in the header, junit.xml and the HTML")
    func rebuiltFromCheckpoint() throws {
        // What a killed run's result.json says: `running`, the time of its last checkpoint as its end.
        let killed = Fixtures.run(status: .running, notes: ["TLS verification was off."])
        let rebuilt = killed.interruptedAtLastCheckpoint()
        #expect(rebuilt.status == .interrupted)
        #expect(rebuilt.notes.first == RunResult.checkpointNote(savedAt: "2025-01-01T02:00:10Z"))
        #expect(rebuilt.notes.dropFirst() == ["TLS verification was off."])
        let junit = JUnitWriter.render(rebuilt)
        #expect(!junit.contains("running"))
        let doc = try Self.document(junit)
        let failures = try doc.nodes(forXPath: "//testcase[@name='run interrupted']/failure")
        #expect(failures.count == 1)
        #expect((failures.first as? XMLElement)?.attribute(forName: "message")?.stringValue?.contains("2025-01-01T02:00:10Z") == true)
        let html = HTMLReport.render(rebuilt)
        #expect(html.contains("<span class=\"status status-interrupted\">interrupted</span>"))
        #expect(html.contains("saved at 2025-01-01T02:00:10Z") && !html.contains("status-running"))
        // A result that ended as planned is left as it is.
        #expect(Fixtures.run().interruptedAtLastCheckpoint() == Fixtures.run())
    }

    @Test("names from a profile are escaped, and control characters XML cannot carry are dropped")
    func escaping() throws {
        var odd = Self.held
        odd.name = "a<b & \"c\" \u{07}'d'"
        let xml = JUnitWriter.render(Self.result([odd]))
        let doc = try Self.document(xml)
        let names = try doc.nodes(forXPath: "//testcase/@name").compactMap(\.stringValue)
        #expect(names.contains("a<b & \"c\" 'd'"))
    }

    @Test("the HTML report lists each threshold with its verdict, first when one failed")
    func htmlSection() {
        let html = HTMLReport.render(Self.result([Self.held, Self.broken]))
        #expect(html.contains("<h2>Thresholds</h2>"))
        #expect(html.contains("1 of 2 thresholds failed: the run exits 2."))
        #expect(html.contains("FAIL"))
        #expect(html.contains("from 2 min 00 s for 1 min 00 s"))
        #expect(!HTMLReport.render(Self.result([])).contains("<h2>Thresholds</h2>"))
    }
}
