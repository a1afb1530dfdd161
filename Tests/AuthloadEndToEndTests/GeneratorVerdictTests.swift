import AuthloadCore
import AuthloadFlows
import AuthloadReport
import AuthloadStaging
import AuthloadTesting
import Foundation
import Testing

@testable import AuthloadCLI

@Suite("The generator's own verdict, on a manual clock", .timeLimit(.minutes(1)))
struct GeneratorVerdictTests {
    let clock = ManualClock()
    let endpoint = Endpoint(host: "127.0.0.1", port: 1)

    /// FCSDK login at 50 arrivals/s for 30 s against the in-process staging server (10 ms), with a
    /// generator that cannot start anyone for `stall` from 10 s on.
    func run(stall: Duration, thresholds: [Threshold] = [], errorRate: Double = 0) async -> RunResult {
        var staging = StagingConfiguration()
        staging.fcsdk.latency = .fixed(.milliseconds(10))
        staging.fcsdk.errorRate = errorRate
        let transport = SimulatedTransport(clock: clock, service: StagingServer(configuration: staging))
        let start = clock.now
        let clock = self.clock
        let hooks = RunHooks { _, due in
            if stall > .zero && due >= .seconds(10) && due < .seconds(10) + stall {
                try? await clock.sleep(until: start.advanced(by: .seconds(10) + stall))
            }
        }
        var plan = RunPlan(
            name: "stall", target: .url(TargetURL(endpoint: endpoint)), load: .open(rate: 50, duration: .seconds(30)),
            flows: [FlowPlan(name: "login", kind: "fcsdk-login", options: ProfileReader(path: "flows[0]", value: .null))],
            users: UserFeeder())
        plan.thresholds = thresholds
        let runner = Runner(
            plan: plan, flows: [FCSDKLoginFlow(options: .init())], transport: transport, endpoint: endpoint,
            clock: clock, hooks: hooks)
        let outcome = await clock.drive(runner.control) { await runner.run() }
        let result = RunResultBuilder.build(plan: plan, outcome: outcome, startedAt: Date(), endedAt: Date(), target: "in process")
        return result
    }

    @Test("a 2 s generator stall at 50 arrivals/s reports the dropped and late arrivals and exits 3, with a red banner")
    func stallExitsThree() async throws {
        let result = await run(stall: .seconds(2))
        let generator = try #require(result.generator)
        #expect(generator.droppedLate == 50)
        #expect(generator.lagP99Micros > generator.maxLagP99Micros)
        let captured = Captured()
        #expect(RunCommand.exitCode(for: result, console: captured.console) == .generatorOverloaded)
        #expect(captured.err.hasPrefix("error: the generator could not keep its schedule: schedule lag p99 "))
        #expect(result.notes.contains { $0.hasPrefix("The load generator could not keep its schedule") })
        let html = HTMLReport.render(result)
        #expect(html.contains("<div class=\"callout callout-bad generator-bad\" role=\"alert\">"))
        #expect(html.contains("50 of 1500 arrivals dropped"))
        #expect(html.contains("Schedule lag and dropped arrivals per interval"), "the generator section charts when it fell behind")
        #expect(result.timeseries.first { $0.index == 10 }?.droppedArrivals == 50)

        let directory = try scratchDirectory("generator")
        let files = try ReportWriter.write(result, to: directory)
        let json = try String(contentsOfFile: files.resultJSON, encoding: .utf8)
        #expect(json.contains("\"droppedLate\" : 50"))
        #expect(try ReportWriter.load(resultJSON: files.resultJSON) == result)
    }

    @Test("a generator that fell behind exits 3 even when a threshold failed too; one that kept up leaves the verdict to the thresholds")
    func precedence() async throws {
        let strict = [Threshold(metric: "login", bound: .percentile(99, max: .milliseconds(1)), path: "thresholds[0]")]
        let stalled = await run(stall: .seconds(2), thresholds: strict)
        #expect(RunCommand.exitCode(for: stalled, console: Captured().console) == .generatorOverloaded)

        let steady = await run(stall: .zero, thresholds: strict)
        #expect(steady.generatorKeptSchedule)
        #expect(steady.generator?.started == 1500)
        #expect(RunCommand.exitCode(for: steady, console: Captured().console) == .thresholdFailed)
        #expect(!HTMLReport.render(steady).contains("generator-bad"))

        // When nothing succeeded the broken target is the news: exit 1, whatever the generator did.
        let broken = await run(stall: .seconds(2), errorRate: 1)
        #expect(!broken.generatorKeptSchedule)
        #expect(RunCommand.exitCode(for: broken, console: Captured().console) == .runError)
    }

    @Test("a lag p99 over the limit is judged only from 100 samples on: below that it is one or two worst wake-ups")
    func fewSamples() {
        func report(samples: Int) -> GeneratorReport {
            GeneratorReport(
                model: "closed", started: 0, droppedAtCap: 0, droppedLate: 0, lagSamples: samples, lagHistogram: "",
                lagP50Micros: 100, lagP99Micros: 150_000, lagMaxMicros: 150_000, maxLagP99Micros: 100_000,
                maxDroppedRate: 0.01, dropAfterMicros: 1_000_000)
        }
        #expect(report(samples: 99).keptSchedule)
        #expect(report(samples: 100).problems == ["schedule lag p99 150.0ms exceeds generator.maxLagP99 100.0ms"])
    }
}
