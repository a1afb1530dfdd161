import AuthloadCore
import AuthloadTesting

/// Runs one iteration of a flow against an ``InProcessHost`` and collects what it recorded.
struct FlowProbe {
    struct Result {
        var outcome: Outcome
        /// From the flow's start to its end, on the manual clock.
        var elapsed: Duration
        var measured: MeasuredRun

        /// The summary of step `step` (or of the flow, for nil).
        func metric(_ flow: String, _ step: String?) -> MetricSummary? {
            measured.metrics.first { $0.id == MetricID(flow: flow, step: step) }
        }

        /// How many errors of `kind` with `detail` were recorded on `step`.
        func errors(_ flow: String, _ step: String?, _ kind: OutcomeKind, _ detail: String) -> Int {
            measured.errors.first { $0.id == MetricID(flow: flow, step: step) && $0.kind == kind && $0.detail == detail }?.count ?? 0
        }
    }

    /// - Parameter late: how long after its due instant the flow starts, as an open-model arrival a busy generator started late.
    static func run(
        _ flow: any Flow, name: String, host: InProcessHost, userIndex: Int = 0, seed: UInt64 = 1,
        stepTimeout: Duration = .seconds(10), flowTimeout: Duration = .seconds(120),
        identity: UserIdentity? = nil, late: Duration = .zero
    ) async -> Result {
        let clock = host.flowClock
        let catalog = MetricCatalog(flows: [(name, flow.stepNames)], events: [name: flow.eventSteps])
        let recorder = MetricsRecorder(metricCount: catalog.count, interval: .seconds(1))
        let collector = Collector(catalog: catalog, recorder: recorder, lag: 1)
        let start = clock.now
        let context = FlowContext(
            clock: clock, client: host.makeClient(for: Endpoint(host: "staging", port: 80)),
            stepTimeout: stepTimeout, deadline: start.advanced(by: flowTimeout), recorder: recorder,
            firstStepMetric: catalog.stepMetric(flow: 0, step: 0), shard: userIndex, runStart: start,
            due: late > .zero ? start.advanced(by: .zero - late) : nil)
        let user = VirtualUser(
            index: userIndex, identity: identity ?? UserIdentity(username: "user\(userIndex)", password: "pw"), seed: seed)
        let outcome = await flow.run(context, user: user)
        let elapsed = start.duration(to: clock.now)
        recorder.record(metric: catalog.flowMetric(0), startOffset: .zero, latency: elapsed, outcome: outcome, shard: userIndex)
        let intervals = Int(elapsed.seconds) + 1
        return Result(
            outcome: outcome, elapsed: elapsed,
            measured: collector.finish(lastInterval: intervals, activeUsers: 0, duration: elapsed))
    }
}
