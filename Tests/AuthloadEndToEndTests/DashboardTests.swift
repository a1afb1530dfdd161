import AuthloadCore
import AuthloadReport
import Foundation
import Testing

/// check-jsonschema from PyPI, which `.ci/run` installs: `python3 -m check_jsonschema`.
enum JSONSchemaTool {
    static let python: String? = {
        for candidate in ["/usr/bin/env", "/usr/bin/python3"]
        where IsolatedPython.run(
            candidate == "/usr/bin/env" ? [candidate, "python3"] : [candidate],
            ["-m", "check_jsonschema", "--version"]
        ).status == 0 {
            return candidate
        }
        return nil
    }()

    static let enabled = python != nil || Interop.required

    /// Validates `instances` against `schema`; the exit status and what the tool said.
    static func validate(schema: String, _ instances: [String]) throws -> (status: Int32, output: String) {
        let python = try #require(python, "AUTHLOAD_REQUIRE_INTEROP=1, but python3 -m check_jsonschema fails: pip install check-jsonschema")
        return IsolatedPython.run(
            python == "/usr/bin/env" ? [python, "python3"] : [python], ["-m", "check_jsonschema", "--schemafile", schema] + instances)
    }

    static func run(_ command: [String], _ arguments: [String]) -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: command[0])
        process.arguments = Array(command.dropFirst()) + arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        do { try process.run() } catch { return (-1, "\(error)") }
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, text)
    }
}

@Suite("The Grafana dashboard and the Prometheus scrape config")
struct DashboardTests {
    static let deploy = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("deploy")
    static let dashboard = deploy.appendingPathComponent("grafana/authload.json").path

    @Test("the dashboard is valid Grafana dashboard JSON", .enabled(if: JSONSchemaTool.enabled))
    func schema() throws {
        let checked = try JSONSchemaTool.validate(
            schema: Self.deploy.appendingPathComponent("grafana/dashboard.schema.json").path, [Self.dashboard])
        #expect(checked.status == 0, "\(checked.output)")
    }

    /// The thresholds panel: its query and the texts its values map to.
    static func thresholdsPanel() throws -> (expression: String, texts: [String: String]) {
        let data = try #require(FileManager.default.contents(atPath: dashboard))
        let panels = try #require(try JSONValue.parse(Array(data))["panels"]?.arrayValue)
        let panel = try #require(panels.first { $0["title"]?.stringValue?.hasPrefix("Thresholds") == true })
        let expression = try #require(panel["targets"]?[0]?["expr"]?.stringValue)
        let options = try #require(panel["fieldConfig"]?["defaults"]?["mappings"]?[0]?["options"]?.objectValue)
        return (expression, Dictionary(options.map { ($0.key, $0.value["text"]?.stringValue ?? "") }) { first, _ in first })
    }

    @Test("the thresholds panel shows pending apart from passing and failing, from authload_threshold_state")
    func thresholdsPanelShowsPending() throws {
        let panel = try Self.thresholdsPanel()
        #expect(panel.expression.contains("authload_threshold_state"))
        for state in ThresholdState.allCases {
            #expect(panel.expression.contains("state=\"\(state.rawValue)\""), "\(state) is not queried")
        }
        #expect(panel.texts == ["1": "passing", "2": "pending", "3": "failing"])
    }

    @Test("every query names only metrics authload exposes")
    func queriesNameExposedMetrics() throws {
        let data = try #require(FileManager.default.contents(atPath: Self.dashboard))
        let json = try JSONValue.parse(Array(data))
        let panels = try #require(json["panels"]?.arrayValue)
        let expressions = panels.flatMap { $0["targets"]?.arrayValue ?? [] }.compactMap { $0["expr"]?.stringValue }
        #expect(expressions.count >= 10)
        // Every sample name of an exposition with every family, the histogram suffixes included.
        let snapshot = LiveSnapshot(
            ids: [MetricID(flow: "f", step: nil), MetricID(flow: "f", step: "s")], events: [false, true],
            series: [MetricSamples(), MetricSamples()], activeUsers: 0, thresholds: [],
            droppedArrivals: 0, maxScheduleLagMicros: 0, elapsed: .zero)
        let exposition = MetricsExposition.render(snapshot, run: .init(profile: "p", version: "v"), format: .prometheus)
        let exposed = Set(
            exposition.split(separator: "\n").filter { $0.hasPrefix("# TYPE ") }.flatMap { line -> [String] in
                let name = String(line.split(separator: " ")[2])
                return line.hasSuffix(" histogram") ? ["_bucket", "_count", "_sum"].map { name + $0 } : [name]
            })
        let names = try Regex(#"\b(authload_[a-z_]+|process_cpu_seconds_total)\b"#)
        for expression in expressions {
            let used = expression.matches(of: names).map { String(expression[$0.range]) }
            #expect(!used.isEmpty, "\(expression) names no authload metric")
            for name in used { #expect(exposed.contains(name), "\(expression): \(name) is not exposed") }
        }
    }
}
