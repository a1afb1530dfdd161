import AuthloadCore
import AuthloadFlows
import AuthloadReport
import AuthloadStaging
import AuthloadTesting
import Foundation
import Testing

@testable import AuthloadCLI

@Suite("Capacity runs on a manual clock", .timeLimit(.minutes(1)))
struct CapacityRunTests {
    let clock = ManualClock()
    let endpoint = Endpoint(host: "127.0.0.1", port: 1)

    /// Open-model steps of 100/s from 100 to 1,500/s, `seconds` each, against the embedded server with
    /// 8 workers of 10 ms (saturation at 800 requests/s), judged by a p99 < 50 ms SLO on the login.
    func stepTest(seconds: Int) async throws -> (RunPlan, RunOutcome) {
        var staging = StagingConfiguration()
        staging.fcsdk.latency = .fixed(.milliseconds(10))
        staging.capacity = CapacityModel.Options(workers: 8, queue: 1000)
        let transport = SimulatedTransport(clock: clock, service: StagingServer.service(configuration: staging, clock: clock))
        var options = HTTPRequestFlow.Options()
        options.method = "POST"
        options.path = "/csdk-sample/SDK/login"
        options.body = Array(#"{"username": "user1", "password": "demo-password"}"#.utf8)
        let stages = stride(from: 100, through: 1500, by: 100).flatMap { rate in
            [LoadStage(duration: .zero, target: Double(rate)), LoadStage(duration: .seconds(Int64(seconds)), target: Double(rate))]
        }
        var plan = RunPlan(
            name: "capacity", target: .url(TargetURL(endpoint: endpoint)), load: .open(stages: stages),
            flows: [FlowPlan(name: "login", kind: "http", options: ProfileReader(path: "flows[0]", value: .null))],
            users: UserFeeder())
        plan.thresholds = [Threshold(metric: "login", bound: .percentile(99, max: .milliseconds(50)), path: "thresholds[0]")]
        let runner = Runner(plan: plan, flows: [HTTPRequestFlow(options: options)], transport: transport, endpoint: endpoint, clock: clock)
        return (plan, await clock.drive(runner.control) { await runner.run() })
    }

    @Test("8 workers of 10 ms under steps of 100/s from 100 to 1,500/s: the last stage inside a p99 < 50 ms SLO is 800/s")
    func lastStageInsideSLO() async throws {
        let (plan, outcome) = try await stepTest(seconds: 1)
        let capacity = try #require(outcome.measured.capacity)
        #expect(capacity.unit == "arrivals/s")
        #expect(capacity.stages.map(\.target) == stride(from: 100, through: 1500, by: 100).map(Double.init))
        let last = try #require(capacity.lastPassingStage.map { capacity.stages[$0] })
        #expect(last.label == "800" || last.label == "700", "last stage inside the SLO: \(last.label)")
        #expect(last.p99Micros < 50_000)
        #expect((last.throughput - last.target).magnitude < 1, "below saturation the server keeps up with the offered rate")
        let knee = try #require(capacity.kneeStage.map { capacity.stages[$0] })
        #expect(knee.target == last.target + 100, "latency climbs right after the last stage inside the SLO")
        // Beyond saturation the queue fills and the server sheds load with 503s.
        let top = try #require(capacity.stages.last)
        #expect(top.errorRate > 0.2)
        #expect((top.throughput - 800).magnitude < 40, "achieved throughput levels off at the server's 800/s, found \(top.throughput)")
        #expect(!top.passed)
        #expect(outcome.generator.keptSchedule)

        // The report names it too: capacity.csv marks the stage, report.html states it and draws the curve.
        let result = RunResultBuilder.build(plan: plan, outcome: outcome, startedAt: Date(), endedAt: Date(), target: "in process")
        let directory = try scratchDirectory("capacity")
        let files = try ReportWriter.write(result, to: directory)
        let csv = try String(contentsOfFile: files.capacityCSV, encoding: .utf8).split(separator: "\r\n").map {
            $0.split(separator: ",", omittingEmptySubsequences: false)
        }
        #expect(csv.count == 16)
        let marked = csv.dropFirst().filter { $0[14] == "true" }
        #expect(marked.map { $0[2] } == ["\(Int(last.target)).000"])
        let html = try String(contentsOfFile: files.html, encoding: .utf8)
        #expect(html.contains("Last stage inside the SLO (every threshold met): <strong>\(last.label) arrivals/s</strong>."))
        #expect(html.contains("Latency by stage"))
        #expect(try ReportWriter.load(resultJSON: files.resultJSON).capacity == capacity)
    }
}
