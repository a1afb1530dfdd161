import AuthloadCore
import AuthloadReport
import Testing

@Suite("Live metrics exposition")
struct MetricsExpositionTests {
    /// A login flow of 100 iterations (10–1,000 ms) with one step, 30 of whose samples failed with 25 different statuses.
    static func snapshot() -> LiveSnapshot {
        var flow = MetricSamples()
        var step = MetricSamples()
        for n in 1...100 {
            flow.record(latencyMicros: n * 10_000, outcome: .ok)
            step.record(latencyMicros: n * 1_000, outcome: n <= 30 ? Outcome(.httpError, "\(500 + n % 25)") : .ok)
        }
        flow.httpRequests = 240
        flow.requestsByProtocol = RequestsByProtocol(h1: 200, h2: 30)
        let verdict = ThresholdVerdict(
            name: #"login p99 ≤ 1s "quoted""#, metric: "login", path: "thresholds[0]", kind: .percentile,
            bound: 1e6, measured: 99_000, passed: true)
        return LiveSnapshot(
            ids: [MetricID(flow: "login", step: nil), MetricID(flow: "login", step: "login")], events: [false, false],
            series: [flow, step], activeUsers: 7, thresholds: [verdict], droppedArrivals: 2,
            maxScheduleLagMicros: 1_500, elapsed: .seconds(12))
    }

    static let info = MetricsExposition.RunInfo(
        profile: "demo", version: "0.1.0", shard: "2/4", cpuSeconds: 1.5,
        gauges: [(flow: "streem", name: "concurrent refreshes", value: 3)], openConnections: 12, openWebSockets: 5)

    func lines(_ format: MetricsExposition.Format) -> [String] {
        MetricsExposition.render(Self.snapshot(), run: Self.info, format: format).split(separator: "\n").map(String.init)
    }

    @Test("a flow whose requests all went over one version has one request series, labelled with it")
    func oneProtocol() {
        var snapshot = Self.snapshot()
        snapshot.series[0].requestsByProtocol = RequestsByProtocol(h1: 0, h2: 240)
        let text = MetricsExposition.render(snapshot, run: Self.info, format: .prometheus)
        let requestLines = text.split(separator: "\n").filter { $0.hasPrefix("authload_http_requests_total") }
        #expect(requestLines == [#"authload_http_requests_total{flow="login",protocol="h2"} 240"#])
    }

    @Test("requests sent again after an h2 refusal have a counter of their own per flow, 0 until one is")
    func resent() {
        var snapshot = Self.snapshot()
        #expect(
            MetricsExposition.render(snapshot, run: Self.info, format: .prometheus).contains(#"authload_http_resent_total{flow="login"} 0"#)
        )
        snapshot.series[0].httpResent = 17
        let text = MetricsExposition.render(snapshot, run: Self.info, format: .prometheus)
        #expect(text.contains("# TYPE authload_http_resent_total counter"))
        #expect(text.contains(#"authload_http_resent_total{flow="login"} 17"#))
        #expect(text.contains(#"authload_http_requests_total{flow="login",protocol="h1"} 200"#), "requests unchanged")
    }

    @Test("counters end in _total, latencies are seconds in cumulative buckets that end in +Inf = count")
    func prometheusText() {
        let text = lines(.prometheus)
        // 240 requests: 200 answered over HTTP/1.1, 30 over HTTP/2, 10 with no answer.
        #expect(text.contains(#"authload_http_requests_total{flow="login",protocol="h1"} 200"#))
        #expect(text.contains(#"authload_http_requests_total{flow="login",protocol="h2"} 30"#))
        #expect(text.contains(#"authload_http_requests_total{flow="login",protocol="none"} 10"#))
        #expect(text.contains(#"authload_flows_total{flow="login"} 100"#))
        #expect(text.contains(#"authload_steps_total{flow="login",kind="request",step="login"} 100"#))
        #expect(text.contains("# TYPE authload_flows_total counter"))
        #expect(text.contains("# TYPE authload_run_info gauge"))
        // 10, 20, … 1,000 ms: 10 at or below 100 ms, 50 at or below 500 ms, all 100 at 1 s.
        #expect(text.contains(#"authload_flow_duration_seconds_bucket{flow="login",le="0.1"} 10"#))
        #expect(text.contains(#"authload_flow_duration_seconds_bucket{flow="login",le="0.5"} 50"#))
        #expect(text.contains(#"authload_flow_duration_seconds_bucket{flow="login",le="1"} 100"#))
        #expect(text.contains(#"authload_flow_duration_seconds_bucket{flow="login",le="+Inf"} 100"#))
        #expect(text.contains(#"authload_flow_duration_seconds_count{flow="login"} 100"#))
        #expect(text.contains(#"authload_flow_duration_seconds_sum{flow="login"} 50.5"#))
        #expect(text.contains("authload_active_users 7"))
        #expect(text.contains(#"authload_run_info{profile="demo",shard="2/4",version="0.1.0"} 1"#))
        #expect(text.contains(#"authload_open_connections{kind="http"} 12"#))
        #expect(text.contains(#"authload_open_connections{kind="websocket"} 5"#))
        #expect(text.contains("authload_dropped_arrivals_total 2"))
        #expect(text.contains("authload_schedule_lag_max_seconds 0.0015"))
        #expect(text.contains("process_cpu_seconds_total 1.5"))
        #expect(text.contains(#"authload_flow_in_progress{flow="streem",name="concurrent refreshes"} 3"#))
        #expect(text.contains(#"authload_threshold_passing{path="thresholds[0]",threshold="login p99 ≤ 1s \"quoted\""} 1"#))
        #expect(!text.contains("# EOF"))
    }

    @Test("a pending threshold has no passing sample, and its state says pending; a judged one reads 1 or 0")
    func pendingThreshold() {
        var snapshot = Self.snapshot()
        var failing = snapshot.thresholds[0]
        failing.name = "login p50 ≤ 1ms"
        failing.path = "thresholds[1]"
        failing.passed = false
        var pending = failing
        pending.name = "login p99 ≤ 1s (1m windows)"
        pending.path = "thresholds[2]"
        snapshot.thresholds += [failing, pending]
        snapshot.thresholdStates = [.passing, .failing, .pending]
        let text = MetricsExposition.render(snapshot, run: Self.info, format: .prometheus).split(separator: "\n").map(String.init)
        let passing = text.filter { $0.hasPrefix("authload_threshold_passing{") }
        #expect(passing.count == 2)
        #expect(passing.contains(#"authload_threshold_passing{path="thresholds[1]",threshold="login p50 ≤ 1ms"} 0"#))
        #expect(!passing.contains { $0.contains("thresholds[2]") })
        #expect(text.contains(#"authload_threshold_state{path="thresholds[2]",state="pending",threshold="login p99 ≤ 1s (1m windows)"} 1"#))
        #expect(text.contains(#"authload_threshold_state{path="thresholds[2]",state="failing",threshold="login p99 ≤ 1s (1m windows)"} 0"#))
        #expect(text.contains(#"authload_threshold_state{path="thresholds[1]",state="failing",threshold="login p50 ≤ 1ms"} 1"#))
        #expect(text.filter { $0.hasPrefix("authload_threshold_state{") }.count == 9, "every state of every threshold")
    }

    @Test("no family is named after its type, as promtool check metrics requires")
    func namesHoldNoType() {
        for line in lines(.prometheus) where line.hasPrefix("# TYPE ") {
            let name = line.split(separator: " ")[2]
            for type in ["gauge", "counter", "histogram", "summary"] {
                #expect(!name.contains(type), "\(name) holds its type")
            }
        }
    }

    @Test("a simulation's run info says simulated=\"true\", and a real run's has no such label")
    func simulatedLabel() {
        var info = Self.info
        info.simulated = true
        let simulated = MetricsExposition.render(Self.snapshot(), run: info, format: .prometheus)
        #expect(simulated.contains(#"authload_run_info{profile="demo",shard="2/4",simulated="true",version="0.1.0"} 1"#))
        let real = MetricsExposition.render(Self.snapshot(), run: Self.info, format: .prometheus)
        #expect(!real.contains("simulated"))
    }

    @Test("error details per series are bounded: the most frequent kept, the rest summed as other")
    func boundedDetails() {
        let errors = lines(.prometheus).filter { $0.hasPrefix("authload_errors_total{") }
        #expect(errors.count == MetricsExposition.maxDetailsPerSeries + 1)
        #expect(errors.contains { $0.contains(#"detail="other""#) })
        let total = errors.compactMap { $0.split(separator: " ").last.flatMap { Int($0) } }.reduce(0, +)
        #expect(total == 30, "no error lost to the bound")
    }

    @Test("OpenMetrics when asked: families named without _total and _info, an info type, and # EOF last")
    func openMetrics() {
        #expect(MetricsExposition.Format(accept: "application/openmetrics-text;version=1.0.0,text/plain;q=0.5") == .openMetrics)
        #expect(MetricsExposition.Format(accept: "text/plain") == .prometheus)
        #expect(MetricsExposition.Format(accept: nil) == .prometheus)
        let text = lines(.openMetrics)
        #expect(text.contains("# TYPE authload_flows counter"))
        #expect(text.contains("# TYPE authload_run info"))
        #expect(text.contains(#"authload_flows_total{flow="login"} 100"#))
        #expect(text.last == "# EOF")
    }
}
