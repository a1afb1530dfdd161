import Foundation
import Testing

@testable import AuthloadCore

/// `authload merge` in memory: shards recorded through the real collector, merged, and set beside one
/// collector that recorded every shard's samples — the one giant generator the merge stands in for.
@Suite("Merging shards")
struct ShardMergeTests {
    /// One sample: its start (ms from the run's start), latency (ms) and whether it failed.
    struct Sample: Sendable {
        var startMillis: Int
        var latencyMillis: Int
        var failed = false
    }

    static let catalog = MetricCatalog(flows: [("login", ["post", "logout"])])
    static let seconds = 20

    /// What one collector makes of `samples`, as the run's result, optionally as shard `shard`.
    static func result(
        _ samples: [Sample], thresholds: [Threshold], shard: String? = nil, seed: UInt64 = 1, startedAt: Double = 1_800_000_000,
        intervalSeconds: Int = 1, profile: String = "p"
    ) throws -> RunResult {
        let evaluator = try ThresholdEvaluator(
            thresholds: thresholds, catalog: catalog, interval: .seconds(intervalSeconds), judgedUntil: .seconds(seconds))
        let recorder = MetricsRecorder(metricCount: catalog.count, interval: .seconds(intervalSeconds))
        let collector = Collector(catalog: catalog, recorder: recorder, lag: 1, thresholds: evaluator)
        for sample in samples {
            let outcome = sample.failed ? Outcome(.httpError, "503") : .ok
            for metric in [0, 1] {
                recorder.record(
                    metric: metric, startOffset: .milliseconds(sample.startMillis), latency: .milliseconds(sample.latencyMillis),
                    outcome: outcome, shard: 0)
            }
            recorder.countRequest(
                metric: 0, startOffset: .milliseconds(sample.startMillis), shard: 0, version: version(of: sample),
                resent: resent(of: sample))
        }
        for second in 1...seconds { collector.tick(completed: second / intervalSeconds, activeUsers: 1) }
        let measured = collector.finish(lastInterval: seconds / intervalSeconds - 1, activeUsers: 0, duration: .seconds(seconds))
        var environment = RunEnvironment(authloadVersion: "test", hostname: "host-\(shard ?? "all")", cores: 2, target: "t", shard: shard)
        environment.startLateSeconds = 0
        var result = RunResult(
            profileName: profile, environment: environment, startedAt: "2027-01-15T08:00:00Z", endedAt: "2027-01-15T08:00:20Z",
            durationSeconds: Double(seconds), intervalSeconds: Double(intervalSeconds), status: .completed,
            metrics: measured.metrics, timeseries: measured.timeseries, errors: measured.errors,
            thresholds: measured.thresholds)
        result.plan = PlanRecord(
            profileDigest: "abc", overrides: [], seed: seed, windowsFromSeconds: 0, windowsUntilSeconds: Double(seconds),
            commonStartEpochSeconds: 1_800_000_000, startedAtEpochSeconds: startedAt)
        return result
    }

    /// The version that answered a sample's request: none for a failed one, else HTTP/2 for even latencies.
    static func version(of sample: Sample) -> HTTPVersion? {
        sample.failed ? nil : sample.latencyMillis % 2 == 0 ? .http2 : .http1
    }

    /// How many times a sample's request was sent again after a refusal: 0 to 2 by latency, a failed one's too.
    static func resent(of sample: Sample) -> Int { sample.latencyMillis % 7 == 0 ? sample.latencyMillis % 3 : 0 }

    @Test("requests sent again add up over the shards to those one collector counted, apart from the requests")
    func resentRequests() throws {
        let parts = (0..<3).map { Self.samples(count: 1_000 + 300 * $0, seed: UInt64($0 + 21)) }
        // Through result.json, as `authload merge` reads the shards.
        let shards = try parts.enumerated().map { index, part in
            try JSONDecoder().decode(
                RunResult.self, from: JSONEncoder().encode(try Self.result(part, thresholds: [], shard: "\(index)/3")))
        }
        let merged = try Self.merge(shards)
        let single = try Self.result(parts.flatMap { $0 }, thresholds: [])
        let all = parts.flatMap { $0 }
        let expected = all.reduce(0) { $0 + Self.resent(of: $1) }
        #expect(expected > 0 && all.contains { $0.failed && Self.resent(of: $0) > 0 })
        #expect(single.httpResent == expected)
        #expect(merged.httpResent == expected)
        #expect(merged.metrics.map(\.httpResent) == single.metrics.map(\.httpResent), "per flow, and absent on steps")
        #expect(merged.metrics.map(\.httpResent) == [expected, nil, nil])
        #expect(merged.httpRequests == all.count, "a resend is no request of its own")
    }

    @Test("requests by protocol add up over the shards to those of one collector that counted them all")
    func requestsByProtocol() throws {
        let parts = (0..<3).map { Self.samples(count: 1_500 + 200 * $0, seed: UInt64($0 + 11)) }
        let merged = try Self.merge(try parts.enumerated().map { try Self.result($1, thresholds: [], shard: "\($0)/3") })
        let single = try Self.result(parts.flatMap { $0 }, thresholds: [])
        let all = parts.flatMap { $0 }
        let expected = RequestsByProtocol(
            h1: all.filter { Self.version(of: $0) == .http1 }.count, h2: all.filter { Self.version(of: $0) == .http2 }.count)
        #expect(expected.h1 > 0 && expected.h2 > 0)
        #expect(single.httpRequestsByProtocol == expected)
        #expect(merged.httpRequestsByProtocol == expected)
        #expect(
            merged.metrics.map(\.httpRequestsByProtocol) == single.metrics.map(\.httpRequestsByProtocol), "per flow, and absent on steps")
        #expect(merged.httpRequestsByProtocol?.unanswered(of: merged.httpRequests ?? 0) == all.filter(\.failed).count)
    }

    /// Latencies drawn from a seeded generator: mostly 5–40 ms, one in fifty 100–900 ms, one in twenty failed.
    static func samples(count: Int, seed: UInt64) -> [Sample] {
        var random = SplitMix64(seed: seed)
        return (0..<count).map { _ in
            let slow = random.next() % 50 == 0
            return Sample(
                startMillis: Int(random.next() % UInt64(seconds * 1000)),
                latencyMillis: slow ? 100 + Int(random.next() % 800) : 5 + Int(random.next() % 35), failed: random.next() % 20 == 0)
        }
    }

    static func merge(_ shards: [RunResult], partial: Bool = false) throws -> RunResult {
        var merger = ShardMerger()
        for (index, shard) in shards.enumerated() { try merger.add(shard, from: "shard-\(index)") }
        return try merger.merged(partial: partial)
    }

    static func histogram(_ summary: MetricSummary?) throws -> Histogram {
        try Histogram(serialized: #require(summary).histogram)
    }

    @Test("merged histograms, counts and errors are those of one histogram that recorded every shard's samples")
    func exactHistograms() throws {
        let parts = (0..<4).map { Self.samples(count: 2_000 + 300 * $0, seed: UInt64($0 + 1)) }
        let shards = try parts.enumerated().map { try Self.result($1, thresholds: [], shard: "\($0)/4") }
        let merged = try Self.merge(shards)
        let single = try Self.result(parts.flatMap { $0 }, thresholds: [])
        for (mine, theirs) in zip(merged.metrics, single.metrics) {
            #expect(mine.id == theirs.id)
            #expect(try Self.histogram(mine) == Self.histogram(theirs), "\(mine.id): bucket for bucket")
            #expect(mine.failedHistogram == theirs.failedHistogram)
            #expect(
                (mine.count, mine.errors, mine.p99Micros, mine.p999Micros) == (
                    theirs.count, theirs.errors, theirs.p99Micros, theirs.p999Micros
                ))
            #expect(mine.successful == theirs.successful)
        }
        #expect(merged.httpRequests == 2_000 * 4 + 300 * 6)
        #expect(merged.errors == single.errors)
        #expect(merged.timeseries.map(\.index) == single.timeseries.map(\.index))
        #expect(merged.timeseries.map { $0.metrics.map(\.count) } == single.timeseries.map { $0.metrics.map(\.count) })
        #expect(merged.timeseries.map(\.activeUsers) == single.timeseries.map { $0.activeUsers * 4 }, "every shard's users")
        #expect(merged.shards?.map(\.shard) == ["0/4", "1/4", "2/4", "3/4"])
        #expect(merged.environment.cores == 8)
        #expect(merged.notes.first?.hasPrefix("Merged from 4 of 4 shards") == true)
    }

    @Test("thresholds are judged again on the merged data, windows included, as one generator would have judged them")
    func thresholdsJudgedAgain() throws {
        // Shard 0 has a slow second (12 s): 2 % of its requests in any 5 s window holding it fail the p99 bound, but
        // only 0.5 % of all shards' requests, so merged, every 5 s window passes.
        var parts = (0..<4).map { Self.samples(count: 4_000, seed: UInt64($0 + 10)).filter { $0.latencyMillis < 100 } }
        parts[0] += (0..<20).map { Sample(startMillis: 12_000 + $0 * 40, latencyMillis: 700) }
        let thresholds = [
            Threshold(metric: "login.post", bound: .percentile(99, max: .milliseconds(100)), window: .seconds(5), path: "thresholds[0]"),
            Threshold(metric: "login", bound: .throughput(min: 500), path: "thresholds[1]"),
            Threshold(metric: "steps", bound: .errorRate(max: 0.06), window: .seconds(5), path: "thresholds[2]"),
            Threshold(metric: "login", bound: .percentile(50, max: .milliseconds(30)), path: "thresholds[3]")
        ]
        let shards = try parts.enumerated().map { try Self.result($1, thresholds: thresholds, shard: "\($0)/4") }
        #expect(shards[0].thresholds[0].passed == false, "shard 0 alone fails the window with its slow second")
        #expect(shards.allSatisfy { !$0.thresholds[1].passed }, "no shard alone reaches the throughput")
        let merged = try Self.merge(shards)
        let single = try Self.result(parts.flatMap { $0 }, thresholds: thresholds)
        #expect(merged.thresholds.map(\.passed) == single.thresholds.map(\.passed))
        #expect(merged.thresholds.map(\.measured) == single.thresholds.map(\.measured))
        #expect(merged.thresholds.map(\.worstWindowStartSeconds) == single.thresholds.map(\.worstWindowStartSeconds))
        #expect(merged.thresholds.map(\.name) == thresholds.map(\.name))
        #expect(merged.thresholds[0].passed && merged.thresholds[1].passed)
        // The rows of the windowed latency series keep their histograms, so their merged percentiles are exact.
        let row = try #require(merged.timeseries.first { $0.index == 12 })
        let post = try #require(row.metrics.first { $0.id.description == "login.post" })
        let singlePost = try #require(single.timeseries.first { $0.index == 12 }?.metrics.first { $0.id.description == "login.post" })
        #expect(post.upperBound == nil && post.p99Micros == singlePost.p99Micros)
        let logout = row.metrics.first { $0.id.description == "login" }
        #expect(logout?.upperBound == true, "a series without histograms in its rows is marked an upper bound")
    }

    @Test(
        "shards that are not of one run are refused with one line naming the difference",
        arguments: [
            ("seed", "shard-1: seed 2 differs from shard-0's 1: these are shards of different runs"),
            ("count", "shard-1: shard count 3 (shard 1/3) differs from shard-0's 4: these are shards of different runs"),
            ("interval", "shard-1: metrics interval 2.0 s differs from shard-0's 1.0 s: these are shards of different runs"),
            ("profile", "shard-1: profile \"q\" differs from shard-0's \"p\": these are shards of different runs"),
            ("file", "shard-1: profile file (digest def) differs from shard-0's (abc): these are shards of different runs"),
            ("duplicate", "shard-1 and shard-0 are both shard 0/4: each index must run once"),
            ("simulated", "shard-1: kind of run simulated differs from shard-0's real: these are shards of different runs"),
            ("unsharded", "shard-1: not a shard of a sharded run (it was run without --shard or --shard-from-env)")
        ])
    func mismatches(kind: String, message: String) throws {
        let samples = Self.samples(count: 50, seed: 3)
        let first = try Self.result(samples, thresholds: [], shard: "0/4")
        let second: RunResult
        switch kind {
        case "seed": second = try Self.result(samples, thresholds: [], shard: "1/4", seed: 2)
        case "count": second = try Self.result(samples, thresholds: [], shard: "1/3")
        case "interval": second = try Self.result(samples, thresholds: [], shard: "1/4", intervalSeconds: 2)
        case "profile": second = try Self.result(samples, thresholds: [], shard: "1/4", profile: "q")
        case "file":
            var other = try Self.result(samples, thresholds: [], shard: "1/4")
            other.plan?.profileDigest = "def"
            second = other
        case "duplicate": second = try Self.result(samples, thresholds: [], shard: "0/4")
        case "simulated":
            var simulated = try Self.result(samples, thresholds: [], shard: "1/4")
            simulated.environment.simulated = true
            second = simulated
        default: second = try Self.result(samples, thresholds: [])
        }
        #expect(throws: MergeMismatch(message)) { try Self.merge([first, second], partial: true) }
    }

    @Test("missing shards are refused, or merged with --partial and named in the report")
    func missingShards() throws {
        let shards = try [0, 2].map { try Self.result(Self.samples(count: 50, seed: UInt64($0)), thresholds: [], shard: "\($0)/4") }
        #expect(throws: MergeMismatch("shard 1/4 and shard 3/4 of 4 are missing (found 2); give --partial to merge the shards there are")) {
            try Self.merge(shards)
        }
        let merged = try Self.merge(shards, partial: true)
        #expect(merged.notes.contains("Partial: shard 1/4 and shard 3/4 are missing; every figure covers the other shards only."))
        #expect(merged.metrics[0].count == 100)
    }

    @Test("a shard that started late lines up by its start, and its lag and generator problems decide exit 3")
    func lateShard() throws {
        let samples = (0..<20).map { Sample(startMillis: $0 * 1000 + 10, latencyMillis: 5) }
        let onTime = try Self.result(samples, thresholds: [], shard: "0/2")
        var late = try Self.result(samples, thresholds: [], shard: "1/2", startedAt: 1_800_000_003)
        late.environment.startLateSeconds = 3
        late.generator = GeneratorReport(
            model: "closed", started: 0, droppedAtCap: 0, droppedLate: 0, lagSamples: 0, lagHistogram: Histogram().serialized(),
            lagP50Micros: 0, lagP99Micros: 0, lagMaxMicros: 0, maxLagP99Micros: 100_000, maxDroppedRate: 0.01, dropAfterMicros: 1_000_000)
        let merged = try Self.merge([onTime, late])
        #expect(merged.timeseries.first { $0.index == 2 }?.metrics.first?.count == 1, "before the late shard began")
        #expect(merged.timeseries.first { $0.index == 3 }?.metrics.first?.count == 2)
        #expect(merged.timeseries.last?.index == 22)
        #expect(merged.durationSeconds == 23)
        #expect(merged.shards?.map(\.intervalOffset) == [0, 3])
        #expect(merged.generator?.problems == ["shard 1/2 started 3.0 s after the common start, more than generator.maxLagP99"])
        #expect(merged.generatorKeptSchedule == false)
    }

    @Test("dropped arrivals add up across shards, each reason apart, and the sum is judged again")
    func droppedArrivalsAddUp() throws {
        let samples = (0..<20).map { Sample(startMillis: $0 * 1000 + 10, latencyMillis: 5) }
        var shards = [
            try Self.result(samples, thresholds: [], shard: "0/2"), try Self.result(samples, thresholds: [], shard: "1/2")
        ]
        for (index, drops) in [(atCap: 1, late: 2, saturated: 0), (atCap: 3, late: 0, saturated: 30)].enumerated() {
            shards[index].generator = GeneratorReport(
                model: "open", started: 1_000, droppedAtCap: drops.atCap, droppedLate: drops.late, droppedSaturated: drops.saturated,
                lagSamples: 0, lagHistogram: Histogram().serialized(), lagP50Micros: 0, lagP99Micros: 0, lagMaxMicros: 0,
                maxLagP99Micros: 100_000, maxDroppedRate: 0.01, dropAfterMicros: 1_000_000)
        }
        let generator = try #require(try Self.merge(shards).generator)
        #expect(generator.droppedAtCap == 4 && generator.droppedLate == 2 && generator.droppedSaturated == 30)
        #expect(generator.due == 2_036)
        // Shard 0 alone stays under 1 %; the sum does not, and says why.
        let expected = "36 of 2036 arrivals dropped (1.77%: 4 at the maxUsers cap, 2 late, 30 while the generator's event loops"
        #expect(generator.problems.first?.hasPrefix(expected) == true, "\(generator.problems)")
    }
}
