@testable import AuthloadCLI
import AuthloadCore
import AuthloadFlows
import AuthloadReport
import AuthloadStaging
import AuthloadTesting
import Foundation
import Testing

@Suite("The generator's own verdict, on a manual clock", .timeLimit(.minutes(1)))
struct GeneratorVerdictTests {
    let clock = ManualClock()
    let endpoint = Endpoint(host: "127.0.0.1", port: 1)

    /// FCSDK login at 50 arrivals/s for 30 s against the in-process staging server (10 ms), with a
    /// generator that cannot start anyone for `stall` from 10 s on.
    func run(stall: Duration, thresholds: [Threshold] = []) async -> (RunResult, RunOutcome) {
        var staging = StagingConfiguration()
        staging.fcsdk.latency = .fixed(.milliseconds(10))
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
            users: UserTemplate())
        plan.thresholds = thresholds
        let runner = Runner(plan: plan, flows: [FCSDKLoginFlow(options: .init())], transport: transport, endpoint: endpoint,
                            clock: clock, hooks: hooks)
        let outcome = await clock.drive(runner.control) { await runner.run() }
        let result = RunResultBuilder.build(plan: plan, outcome: outcome, startedAt: Date(), endedAt: Date(), target: "in process")
        return (result, outcome)
    }

    @Test("a 2 s generator stall at 50 arrivals/s reports the dropped and late arrivals and exits 3, with a red banner")
    func stallExitsThree() async throws {
        let (result, outcome) = await run(stall: .seconds(2))
        let generator = try #require(result.generator)
        #expect(generator.droppedLate == 50)
        #expect(generator.lagP99Micros > generator.maxLagP99Micros)
        let captured = Captured()
        #expect(RunCommand.exitCode(for: result, outcome: outcome, console: captured.console) == .generatorOverloaded)
        #expect(captured.err.hasPrefix("error: the generator could not keep its schedule: schedule lag p99 "))
        #expect(result.notes.contains { $0.hasPrefix("The load generator could not keep its schedule") })
        let html = HTMLReport.render(result)
        #expect(html.contains("<div class=\"callout callout-bad generator-bad\" role=\"alert\">"))
        #expect(html.contains("50 of 1500 arrivals dropped"))
        #expect(html.contains("Schedule lag and dropped arrivals per interval"), "the generator section charts when it fell behind")
        #expect(result.timeseries.first { $0.index == 10 }?.droppedArrivals == 50)

        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("authload-gen-\(UUID().uuidString)").path
        let files = try ReportWriter.write(result, to: directory)
        let json = try String(contentsOfFile: files.resultJSON, encoding: .utf8)
        #expect(json.contains("\"droppedLate\" : 50"))
        #expect(try ReportWriter.load(resultJSON: files.resultJSON) == result)
    }

    @Test("a generator that fell behind exits 3 even when a threshold failed too; one that kept up leaves the verdict to the thresholds")
    func precedence() async throws {
        let strict = [Threshold(metric: "login", bound: .percentile(99, max: .milliseconds(1)), path: "thresholds[0]")]
        let (stalled, stalledOutcome) = await run(stall: .seconds(2), thresholds: strict)
        #expect(RunCommand.exitCode(for: stalled, outcome: stalledOutcome, console: Captured().console) == .generatorOverloaded)

        let (steady, steadyOutcome) = await run(stall: .zero, thresholds: strict)
        #expect(steady.generatorKeptSchedule)
        #expect(steady.generator?.started == 1500)
        #expect(RunCommand.exitCode(for: steady, outcome: steadyOutcome, console: Captured().console) == .thresholdFailed)
        #expect(!HTMLReport.render(steady).contains("generator-bad"))
    }
}
