import AuthloadTesting
import Testing

@testable import AuthloadCore

@Suite("Thresholds judged on a manual clock", .timeLimit(.minutes(2)))
struct ThresholdRunTests {
    let clock = ManualClock()
    let endpoint = Endpoint(host: "127.0.0.1", port: 1)

    @Test("a one-minute-window p99 fails on a two-minute spike that the whole-run p99 hides")
    func windowCatchesSpike() async throws {
        // 10 users, one 1 s iteration each (two 10 ms steps, 980 ms think) for 30 min. Between 10:00 and 12:00
        // every 10th request takes 400 ms: 0.67 % of the run's requests, 10 % of any minute inside the spike.
        let start = clock.now
        let counter = Locked(0)
        let clock = self.clock
        let transport = SimulatedTransport(clock: clock) { _, _ in
            let elapsed = start.duration(to: clock.now)
            let n = counter.withLock { value in
                value += 1
                return value
            }
            let spiking = elapsed >= .seconds(600) && elapsed < .seconds(720) && n % 10 == 0
            return ServiceReply(HTTPResponse(status: 200), after: spiking ? .milliseconds(400) : .milliseconds(10))
        }
        var plan = RunPlan.closed(users: 10, duration: .seconds(1800), think: .milliseconds(980))
        plan.thresholds = [
            Threshold(metric: "steps", bound: .percentile(99, max: .milliseconds(200)), path: "thresholds[0]"),
            Threshold(metric: "steps", bound: .percentile(99, max: .milliseconds(200)), window: .seconds(60), path: "thresholds[1]")
        ]
        let runner = Runner(plan: plan, flows: [PingFlow()], transport: transport, endpoint: endpoint, clock: clock)
        let run = Task { await runner.run() }
        await clock.run(until: start.advanced(by: .seconds(1800)), quiet: runner.control)
        let outcome = await run.value

        let verdicts = outcome.measured.thresholds
        try #require(verdicts.count == 2)
        let whole = verdicts[0]
        let windowed = verdicts[1]
        #expect(whole.passed, "whole-run p99 was \(whole.measuredText)")
        #expect(whole.measured.map { (10_000...10_010).contains($0) } == true, "p99 is the 10 ms base latency within 3 digits")
        #expect(!windowed.passed)
        #expect(windowed.measured == 400_000)
        let worstStart = try #require(windowed.worstWindowStartSeconds)
        #expect(worstStart > 540 && worstStart < 720, "the worst window overlaps the spike, found \(worstStart) s")
        #expect(windowed.windowSeconds == 60)
        #expect(outcome.abortedBy == nil)
    }

    @Test("an abortOnFail error-rate threshold stops the run once it fails after its grace")
    func abortOnFail() async throws {
        // Every request fails from 20 s on; the 5 s window of errors is judged once its last interval is final.
        let start = clock.now
        let clock = self.clock
        let transport = SimulatedTransport(clock: clock) { _, _ in
            let failing = start.duration(to: clock.now) >= .seconds(20)
            return ServiceReply(HTTPResponse(status: failing ? 500 : 200), after: .milliseconds(10))
        }
        // A 500 ms ramp puts the users' flows at x.1–x.5 s, so none is in flight when a whole-second tick aborts.
        var plan = RunPlan.closed(
            users: 5, rampUp: .milliseconds(500), duration: .seconds(600), think: .milliseconds(980),
            stepTimeout: .seconds(2))
        let threshold = Threshold(
            metric: "ping", bound: .errorRate(max: 0.1), window: .seconds(5), abortOnFail: true,
            abortGrace: .seconds(10), path: "thresholds[0]")
        plan.thresholds = [threshold]
        let runner = Runner(plan: plan, flows: [PingFlow()], transport: transport, endpoint: endpoint, clock: clock)
        let run = Task { await runner.run() }
        // Window 16–20 s (one failing interval in five: 20 %) is final once interval 20 is 3 intervals old
        // (2 s step timeout + 1): at the 24 s tick.
        await clock.run(until: start.advanced(by: .seconds(23)), quiet: runner.control)
        await clock.waitUntilQuiet(runner.control)
        #expect(runner.collector.abortingThreshold == nil)
        #expect(!runner.control.wasStopRequested)
        // The 24 s tick aborts: the run drains at once (nothing in flight) and ends.
        await clock.run(until: start.advanced(by: .seconds(24)), quiet: runner.control)
        let outcome = await run.value

        #expect(outcome.abortedBy == threshold)
        #expect(!outcome.stoppedEarly, "an abort is not an interruption")
        #expect(outcome.elapsed == .seconds(24))
        let verdict = try #require(outcome.measured.thresholds.first)
        #expect(!verdict.passed)
        #expect(verdict.abortedRun)
        #expect((verdict.measured ?? 0) >= 0.2, "the worst window judged by the end of the run")
    }

    @Test("live, a windowed threshold is pending until its first window settles and a whole-run throughput until the end")
    func liveStates() async throws {
        let transport = SimulatedTransport(clock: clock) { _, _ in ServiceReply(HTTPResponse(status: 200), after: .milliseconds(10)) }
        var plan = RunPlan.closed(users: 5, rampUp: .seconds(10), duration: .seconds(300), think: .milliseconds(980))
        plan.thresholds = [
            Threshold(metric: "steps", bound: .percentile(99, max: .milliseconds(200)), window: .seconds(60), path: "thresholds[0]"),
            Threshold(metric: "ping", bound: .throughput(min: 1), path: "thresholds[1]"),
            Threshold(metric: "steps", bound: .errorRate(max: 0.01), path: "thresholds[2]")
        ]
        let runner = Runner(plan: plan, flows: [PingFlow()], transport: transport, endpoint: endpoint, clock: clock)
        let start = clock.now
        #expect(runner.collector.liveSnapshot().thresholdStates == [.pending, .pending, .pending], "nothing measured yet")
        let run = Task { await runner.run() }
        // The first window (10–70 s) settles once no flow started in it can still run: 120 s flow timeout later.
        await clock.run(until: start.advanced(by: .seconds(150)), quiet: runner.control)
        await clock.waitUntilQuiet(runner.control)
        let early = runner.collector.liveSnapshot()
        #expect(early.thresholdStates == [.pending, .pending, .passing])
        #expect(!early.thresholds[0].passed, "the verdict alone would read as a failure")
        await clock.run(until: start.advanced(by: .seconds(200)), quiet: runner.control)
        await clock.waitUntilQuiet(runner.control)
        #expect(runner.collector.liveSnapshot().thresholdStates == [.passing, .pending, .passing])
        await clock.run(until: start.advanced(by: .seconds(300)), quiet: runner.control)
        let outcome = await run.value
        #expect(outcome.measured.thresholds.map(\.passed) == [true, true, true])
        #expect(runner.collector.liveSnapshot().thresholdStates == [.passing, .passing, .passing], "after the run: the verdicts")
    }

    @Test("whole-run error rate and throughput are judged against the run's totals")
    func wholeRunFigures() async throws {
        let transport = SimulatedTransport(clock: clock) { request, _ in ServiceReply(HTTPResponse(status: 200), after: .milliseconds(10)) }
        var plan = RunPlan.closed(users: 10, duration: .seconds(60), think: .milliseconds(980))
        plan.thresholds = [
            Threshold(metric: "ping", bound: .throughput(min: 9.5), path: "thresholds[0]"),
            Threshold(metric: "ping", bound: .throughput(min: 11), path: "thresholds[1]"),
            Threshold(metric: "ping.first", bound: .errorRate(max: 0), path: "thresholds[2]"),
            Threshold(metric: "ping.second", bound: .percentile(50, max: .milliseconds(9)), path: "thresholds[3]")
        ]
        let runner = Runner(plan: plan, flows: [PingFlow()], transport: transport, endpoint: endpoint, clock: clock)
        let run = Task { await runner.run() }
        await clock.run(until: clock.now.advanced(by: .seconds(60)), quiet: runner.control)
        let outcome = await run.value
        let verdicts = outcome.measured.thresholds
        #expect(verdicts.map(\.passed) == [true, false, true, false])
        #expect(verdicts[0].measured == 10, "600 flows in 60 s")
        #expect(verdicts[2].measured == 0)
        #expect(verdicts[3].measured == 10_000)
    }

    @Test("`steps` means request steps: an event step (a pushed status timed from the flow start) is neither its latency nor its errors")
    func stepsAreRequests() throws {
        let catalog = MetricCatalog(flows: [(name: "gccs", steps: ["auth", "status"])], events: ["gccs": ["status"]])
        let thresholds = [
            Threshold(metric: "steps", bound: .percentile(99, max: .milliseconds(50)), path: "thresholds[0]"),
            Threshold(metric: "steps", bound: .errorRate(max: 0.01), path: "thresholds[1]")
        ]
        let evaluator = try ThresholdEvaluator(thresholds: thresholds, catalog: catalog, interval: .seconds(1), judgedUntil: .seconds(10))
        #expect(try ThresholdEvaluator.resolve(thresholds[0], catalog: catalog) == [catalog.stepMetric(flow: 0, step: 0)])
        var cumulative = Array(repeating: MetricSamples(), count: catalog.count)
        for _ in 0..<100 {
            cumulative[catalog.stepMetric(flow: 0, step: 0)].record(latencyMicros: 4_000, outcome: .ok)
            cumulative[catalog.stepMetric(flow: 0, step: 1)].record(latencyMicros: 410_000, outcome: Outcome(.protocolError, "AuthFailed"))
        }
        let verdicts = evaluator.verdicts(cumulative: cumulative, duration: .seconds(10), abortedBy: nil)
        #expect(verdicts.map(\.passed) == [true, true])
        #expect(abs((verdicts[0].measured ?? 0) - 4_000) <= 4, "µs")
        #expect(verdicts[1].measured == 0)
    }

    @Test("latency thresholds judge successful samples unless told to judge all: instant 503s cannot pull a p50 down")
    func successfulSamples() throws {
        let catalog = MetricCatalog(flows: [(name: "login", steps: ["login"])])
        var all = Threshold(metric: "login.login", bound: .percentile(50, max: .milliseconds(40)), path: "thresholds[1]")
        all.samples = .all
        let thresholds = [Threshold(metric: "login.login", bound: .percentile(50, max: .milliseconds(40)), path: "thresholds[0]"), all]
        let evaluator = try ThresholdEvaluator(thresholds: thresholds, catalog: catalog, interval: .seconds(1), judgedUntil: .seconds(10))
        var cumulative = Array(repeating: MetricSamples(), count: catalog.count)
        let step = catalog.stepMetric(flow: 0, step: 0)
        for _ in 0..<100 {
            cumulative[step].record(latencyMicros: 50_000, outcome: .ok)
            cumulative[step].record(latencyMicros: 1_000, outcome: Outcome(.httpError, "503"))
        }
        #expect(cumulative[step].histogram.value(atPercentile: 50) <= 1_001, "pooled, half the samples are instant failures")
        #expect(abs(cumulative[step].successes.value(atPercentile: 50) - 50_000) <= 50)
        #expect(cumulative[step].failures.totalCount == 100)
        let verdicts = evaluator.verdicts(cumulative: cumulative, duration: .seconds(10), abortedBy: nil)
        #expect(verdicts.map(\.passed) == [false, true])
        #expect(verdicts.map(\.samples) == [.successful, .all])
        #expect(verdicts[0].samplesText == " of successful samples")
    }

    @Test("a threshold naming no flow or step is refused before the run, listing what exists")
    func unknownMetric() throws {
        var plan = RunPlan.closed(users: 1, duration: .seconds(10), think: .seconds(1))
        plan.thresholds = [Threshold(metric: "ping.thrid", bound: .errorRate(max: 0.1), path: "thresholds[0]")]
        #expect(
            throws: ProfileError(
                "thresholds[0].metric", "\"ping.thrid\" is no flow or step of this profile (known: steps, ping, ping.first, ping.second)")
        ) {
            try Runner<ManualClock>.validate(plan, flows: [PingFlow()])
        }
    }
}

@Suite("Threshold profile entries")
struct ThresholdProfileTests {
    static func profile(_ thresholds: String) -> String {
        """
        {"name": "demo", "target": {"embedded": {}}, "load": {"users": 1, "duration": "30s"},
         "flows": [{"name": "login", "kind": "fcsdk-login"}], "thresholds": [\(thresholds)]}
        """
    }

    @Test("each form of threshold reads into its bound")
    func forms() throws {
        let plan = try Profile.parse(
            Self.profile(
                """
                {"metric": "login", "percentile": 99.9, "max": "2s", "window": "5m"},
                {"metric": "errors", "maxRate": 0.01},
                {"metric": "login.logout", "maxErrorRate": 0.05, "abortOnFail": true, "abortGrace": "30s"},
                {"metric": "login", "minThroughput": 12.5},
                {"metric": "login", "percentile": 50, "max": "1s", "samples": "all"}
                """), fileName: "demo.json")
        #expect(
            plan.thresholds == [
                Threshold(metric: "login", bound: .percentile(99.9, max: .seconds(2)), window: .seconds(300), path: "thresholds[0]"),
                Threshold(metric: "steps", bound: .errorRate(max: 0.01), path: "thresholds[1]"),
                Threshold(
                    metric: "login.logout", bound: .errorRate(max: 0.05), abortOnFail: true, abortGrace: .seconds(30), path: "thresholds[2]"
                ),
                Threshold(metric: "login", bound: .throughput(min: 12.5), path: "thresholds[3]"),
                {
                    var all = Threshold(metric: "login", bound: .percentile(50, max: .seconds(1)), path: "thresholds[4]")
                    all.samples = .all
                    return all
                }()
            ])
        #expect(plan.thresholds[0].samples == .successful, "the default")
        #expect(
            plan.thresholds.map(\.name) == [
                "login p99.9 ≤ 2s (5m windows)", "steps error rate ≤ 1%", "login.logout error rate ≤ 5%", "login throughput ≥ 12.5/s",
                "login p50 ≤ 1s"
            ])
    }

    @Test(
        "a bad threshold names its field and says what to write",
        arguments: [
            (
                "{\"metric\": \"login\", \"percentile\": 99}",
                "thresholds[0].percentile: needs \"max\" beside it (the latency bound, e.g. \"500ms\")"
            ),
            ("{\"metric\": \"login\", \"max\": \"1s\"}", "thresholds[0].max: needs \"percentile\" beside it (e.g. 99)"),
            (
                "{\"metric\": \"login\", \"percentile\": 120, \"max\": \"1s\"}",
                "thresholds[0].percentile: must be in (0, 100], e.g. 99 or 99.9"
            ),
            (
                "{\"metric\": \"login\"}",
                "thresholds[0]: needs a bound: \"percentile\" with \"max\", \"maxErrorRate\", or \"minThroughput\""
            ),
            (
                "{\"metric\": \"login\", \"maxErrorRate\": 0.1, \"minThroughput\": 5}",
                "thresholds[0]: give one bound per threshold (percentile+max, maxErrorRate or minThroughput); split it into several thresholds"
            ),
            (
                "{\"metric\": \"login\", \"maxErrorRate\": 0.1, \"abortGrace\": \"5s\"}",
                "thresholds[0].abortGrace: only means something with \"abortOnFail\": true"
            ),
            ("{\"metric\": \"login\", \"minThroughput\": 0}", "thresholds[0].minThroughput: must be greater than 0 (samples per second)"),
            (
                "{\"metric\": \"login\", \"maxErrorRate\": 0.1, \"windw\": \"1m\"}",
                "thresholds[0].windw: unknown field (expected one of: abortGrace, abortOnFail, max, maxErrorRate, maxRate, metric, minThroughput, percentile, samples, window)"
            ),
            (
                "{\"metric\": \"login\", \"maxErrorRate\": 0.1, \"samples\": \"all\"}",
                "thresholds[0].samples: only means something with \"percentile\" (a latency bound)"
            ),
            (
                "{\"metric\": \"login\", \"percentile\": 99, \"max\": \"1s\", \"samples\": \"ok\"}",
                "thresholds[0].samples: \"ok\" is not one of: successful, all"
            )
        ])
    func badThreshold(text: String, expected: String) {
        #expect(throws: ProfileError.self) { try Profile.parse(Self.profile(text), fileName: "demo.json") }
        do {
            _ = try Profile.parse(Self.profile(text), fileName: "demo.json")
        } catch {
            #expect(error.description == expected)
        }
    }
}

@Suite("Sliding windows and histogram subtraction")
struct SlidingWindowTests {
    @Test("subtracting a merged histogram leaves exactly the other one's counts and percentiles")
    func subtractInvertsMerge() {
        var random = SplitMix64(seed: 42)
        var a = Histogram()
        var b = Histogram()
        for _ in 0..<10_000 { a.record(Int.random(in: 100...5_000, using: &random)) }
        for _ in 0..<10_000 { b.record(Int.random(in: 50_000...900_000, using: &random)) }
        var both = a
        both.merge(b)
        both.subtract(b)
        #expect(both.totalCount == a.totalCount)
        #expect(both.mean == a.mean)
        for p in [1.0, 50, 90, 99, 99.9] { #expect(both.value(atPercentile: p) == a.value(atPercentile: p), "p\(p)") }
        // The old maximum is gone; the new one is known to its slot's precision (3 significant digits).
        #expect(both.max >= a.max && both.max <= a.max + a.max / 1000, "max \(both.max) vs \(a.max)")
        both.subtract(a)
        #expect(both.isEmpty)
    }

    @Test("a window sums exactly the last n intervals pushed")
    func windowSums() {
        var window = SlidingWindow(length: 3, keepsLatency: true)
        for value in 1...7 {
            var samples = MetricSamples()
            for _ in 0..<value {
                samples.record(latencyMicros: value * 1000, outcome: value.isMultiple(of: 2) ? .ok : Outcome(.httpError, "500"))
            }
            window.push(samples)
            let kept = max(1, value - 2)...value
            #expect(window.count == kept.reduce(0, +))
            #expect(window.errors == kept.filter { !$0.isMultiple(of: 2) }.reduce(0, +))
            #expect(window.histogram.value(atPercentile: 100) == value * 1000)
            #expect(window.histogram.value(atPercentile: 0.0001) == kept.lowerBound * 1000)
        }
    }
}
