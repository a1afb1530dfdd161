import AuthloadCore
import AuthloadReport
import AuthloadTransport
import AuthloadWire
import Foundation
import Testing

@testable import AuthloadCLI

/// Prometheus and promtool from Debian's `prometheus` package, which `.ci/run` installs.
enum PrometheusTools {
    static func find(_ name: String) -> String? {
        ["/usr/bin/\(name)", "/usr/local/bin/\(name)"].first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    static let prometheus = find("prometheus")
    static let promtool = find("promtool")
    /// Run when installed, or when CI demands it (and the tests then fail on its absence).
    static let enabled = (prometheus != nil && promtool != nil) || Interop.required

    /// `promtool check metrics` of an exposition: its exit status and what it said.
    static func check(_ exposition: String, promtool: String) throws -> (status: Int32, report: String) {
        let checked = Process()
        checked.executableURL = URL(fileURLWithPath: promtool)
        checked.arguments = ["check", "metrics"]
        // From a file, not a pipe: a large exposition would fill the pipe before promtool's output is read.
        let path = try temporaryFile("exposition.txt", exposition)
        let input = try #require(FileHandle(forReadingAtPath: path))
        defer { try? input.close() }
        let output = Pipe()
        checked.standardInput = input
        checked.standardOutput = output
        checked.standardError = output
        try checked.run()
        let report = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        checked.waitUntilExit()
        return (checked.terminationStatus, report)
    }

    /// A port nothing listens on right now.
    static func freePort(_ group: EventLoopGroup) throws -> Int {
        let probe = try HTTPServer(group: group, port: 0, service: NotFound())
        defer { probe.close() }
        return probe.port
    }

    private struct NotFound: HTTPService {
        func respond(to request: HTTPRequest) -> ServiceReply { ServiceReply(HTTPResponse(status: 404)) }
    }
}

@Suite("Live metrics scraped by a real Prometheus", .serialized, .timeLimit(.minutes(2)), .enabled(if: PrometheusTools.enabled))
struct PrometheusTests {
    /// 20 users of FCSDK login against the embedded server for 20 s, with a secret in the profile.
    static let profile = """
        {"name": "live", "target": {"embedded": {"fcsdk": {"latency": {"fixed": "20ms"}, "errorRate": 0.02, "password": "hunter2-secret-pw"}}},
         "load": {"users": 20, "duration": "20s", "thinkTime": "100ms", "gracefulStop": "5s"},
         "users": {"username": "agent{n}", "password": "hunter2-secret-pw"},
         "flows": [{"name": "login", "kind": "fcsdk-login"}],
         "thresholds": [{"metric": "login.login", "percentile": 99, "max": "2s"}],
         "metrics": {"linger": "3s"}}
        """

    @Test("a 20 s run scraped every second: the final counters equal result.json, the p99 estimate falls in the report's bucket")
    func scrapedRun() async throws {
        let prometheus = try #require(
            PrometheusTools.prometheus, "AUTHLOAD_REQUIRE_INTEROP=1, but no prometheus: apt-get install prometheus")
        let group = try EventLoopGroup(loops: 1)
        defer { group.shutdown() }
        let metricsPort = try PrometheusTools.freePort(group)
        let apiPort = try PrometheusTools.freePort(group)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("authload-prometheus-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let config = """
            global: {scrape_interval: 1s, evaluation_interval: 1s}
            scrape_configs:
              - job_name: authload
                static_configs: [{targets: ["127.0.0.1:\(metricsPort)"]}]
            """
        try config.write(toFile: directory + "/prometheus.yml", atomically: true, encoding: .utf8)
        let server = Process()
        server.executableURL = URL(fileURLWithPath: prometheus)
        server.arguments = [
            "--config.file=\(directory)/prometheus.yml", "--storage.tsdb.path=\(directory)/data",
            "--web.listen-address=127.0.0.1:\(apiPort)", "--log.level=warn"
        ]
        server.standardOutput = FileHandle.nullDevice
        server.standardError = FileHandle.nullDevice
        try server.run()
        defer {
            server.terminate()
            server.waitUntilExit()
        }
        let api = SocketTransport(group: group).makeClient(for: Endpoint(host: "127.0.0.1", port: apiPort))
        defer { api.shutdown() }
        // Prometheus takes a moment to open its storage: wait for it, at most 30 s.
        var ready = false
        for _ in 0..<60 where !ready {
            ready = (try? await api.execute(HTTPRequest(method: "GET", target: "/-/ready"), timeout: .seconds(1)))?.status == 200
            if !ready { try await Task.sleep(for: .milliseconds(500)) }
        }
        try #require(ready, "Prometheus did not become ready in 30 s")

        let profilePath = directory + "/live.json"
        try Self.profile.write(toFile: profilePath, atomically: true, encoding: .utf8)
        let captured = Captured()
        let code = await Authload.main(
            [
                "run", profilePath, "--out", directory + "/report", "--quiet",
                "--metrics-listen", "127.0.0.1:\(metricsPort)"
            ], console: captured.console)
        #expect(code == .success, "\(captured.err)")
        let result = try ReportWriter.load(resultJSON: directory + "/report/result.json")
        let flow = try #require(result.metrics.first { $0.id == MetricID(flow: "login", step: nil) })
        let step = try #require(result.metrics.first { $0.id == MetricID(flow: "login", step: "login") })

        /// The one value of an instant query over the run (counters only grow: their maximum is the final value).
        func query(_ promQL: String, at time: String? = nil) async throws -> Double {
            let target = "/api/v1/query?query=" + PercentEncoding.encode(promQL) + (time.map { "&time=" + $0 } ?? "")
            let response = try await api.execute(HTTPRequest(method: "GET", target: target), timeout: .seconds(5))
            let body = try JSONValue.parse(response.body)
            let value = try #require(
                body["data"]?["result"]?[0]?["value"]?[1]?.stringValue, "\(promQL): \(String(decoding: response.body, as: UTF8.self))")
            return try #require(Double(value))
        }
        #expect(try await query(#"max_over_time(authload_flows_total{flow="login"}[5m])"#) == Double(flow.count))
        // Split by the protocol label; over all of it, the flow's HTTP requests.
        #expect(try await query(#"sum(max_over_time(authload_http_requests_total{flow="login"}[5m]))"#) == Double(flow.httpRequests ?? -1))
        #expect(
            try await query(#"max_over_time(authload_http_requests_total{flow="login",protocol="h1"}[5m])"#)
                == Double(flow.httpRequestsByProtocol?.h1 ?? -1))
        #expect(try await query(#"max_over_time(authload_steps_total{step="login"}[5m])"#) == Double(step.count))
        let errors = result.errors.filter { $0.id == step.id }.reduce(0) { $0 + $1.count }
        #expect(try await query(#"sum(max_over_time(authload_errors_total{step="login"}[5m]))"#) == Double(errors))
        let estimate = try await query(
            #"histogram_quantile(0.99, max_over_time(authload_step_duration_seconds_bucket{step="login"}[5m]))"#)
        let bounds = MetricsExposition.bucketSeconds + [.infinity]
        func bucket(_ seconds: Double) -> Int { bounds.firstIndex { seconds <= $0 } ?? bounds.count - 1 }
        let reported = Double(step.p99Micros) / 1e6
        #expect(abs(bucket(estimate) - bucket(reported)) <= 1, "Prometheus p99 \(estimate) s, report p99 \(reported) s")
        #expect(try await query(#"max_over_time(authload_threshold_passing[5m])"#) == 1)
        // The dashboard's own thresholds query, as it stood 2 s ago (in the linger, before the target went away).
        let stamp = String(Date().timeIntervalSince1970 - 2)
        #expect(try await query(DashboardTests.thresholdsPanel().expression, at: stamp) == 1, "passing")
        // The scrape config's example join: authload_run_info lends its labels to another series.
        let scrapeConfig = try String(
            contentsOf: DashboardTests.deploy.appendingPathComponent("prometheus/prometheus.yml"), encoding: .utf8)
        let join = try #require(scrapeConfig.split(separator: "\n").first { $0.contains("group_left") })
        #expect(try await query(String(join.drop { $0 == "#" || $0 == " " }), at: stamp) > 0, "flows per second, by shard")
    }

    @Test("the exposition of a real run passes promtool check metrics and holds no secret of the profile or the server")
    func promtoolAndSecrets() async throws {
        let promtool = try #require(PrometheusTools.promtool, "AUTHLOAD_REQUIRE_INTEROP=1, but no promtool: apt-get install prometheus")
        let group = try EventLoopGroup(loops: 1)
        defer { group.shutdown() }
        let port = try PrometheusTools.freePort(group)
        let profilePath = try temporaryFile("live.json", Self.profile.replacingOccurrences(of: "\"20s\"", with: "\"3s\""))
        let client = SocketTransport(group: group).makeClient(for: Endpoint(host: "127.0.0.1", port: port))
        defer { client.shutdown() }
        let scrape = Task {
            // Scrape during the run; bounded to the run's length.
            var last = ""
            for _ in 0..<16 {
                try? await Task.sleep(for: .milliseconds(400))
                if let response = try? await client.execute(HTTPRequest(method: "GET", target: "/metrics"), timeout: .seconds(2)),
                    response.status == 200
                {
                    last = String(decoding: response.body, as: UTF8.self)
                }
            }
            return last
        }
        let captured = Captured()
        let out = (profilePath as NSString).deletingLastPathComponent + "/report"
        _ = await Authload.main(["run", profilePath, "--out", out, "--quiet", "--metrics-listen", "\(port)"], console: captured.console)
        let exposition = await scrape.value
        try #require(exposition.contains("authload_flows_total"), "no scrape succeeded: \(captured.err)")
        for secret in ["hunter2-secret-pw", "agent0", "sessionid"] {
            #expect(!exposition.contains(secret), "\(secret) leaked into the exposition")
        }
        let checked = try PrometheusTools.check(exposition, promtool: promtool)
        #expect(checked.status == 0, "promtool: \(checked.report)")
    }

    @Test("the exposition of every shipped profile, each series with a success and a failure, passes promtool check metrics")
    func promtoolEveryShippedProfile() throws {
        let promtool = try #require(PrometheusTools.promtool, "AUTHLOAD_REQUIRE_INTEROP=1, but no promtool: apt-get install prometheus")
        let directory = packageRoot.appendingPathComponent("Profiles")
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter {
            $0.hasSuffix(".json") && !$0.hasSuffix(".schema.json")
        }
        #expect(files.contains("mixed.json"))
        let group = try EventLoopGroup(loops: 1)
        defer { group.shutdown() }
        for file in files.sorted() {
            let profile = try LoadedProfile.load(directory.appendingPathComponent(file).path)
            // Nothing is sent: the runner only builds the series, thresholds and gauges the profile's flows name.
            let runner = Runner(
                plan: profile.plan, flows: profile.flows, transport: SocketTransport(group: group),
                endpoint: Endpoint(host: "127.0.0.1", port: 9), clock: ContinuousClock())
            var snapshot = runner.collector.liveSnapshot()
            snapshot.series = snapshot.series.map { _ in
                var samples = MetricSamples()
                samples.record(latencyMicros: 20_000, outcome: .ok)
                samples.record(latencyMicros: 3_000_000, outcome: Outcome(.httpError, "503"))
                return samples
            }
            let gauges = zip(profile.plan.flows, profile.flows).flatMap { plan, flow in
                flow.gauges.keys.map { (flow: plan.name, name: $0, value: 1) }
            }
            let exposition = MetricsExposition.render(
                snapshot, run: .init(profile: profile.plan.name, version: HelpText.version, gauges: gauges), format: .prometheus)
            let checked = try PrometheusTools.check(exposition, promtool: promtool)
            #expect(checked.status == 0, "\(file): promtool: \(checked.report)")
        }
    }
}
