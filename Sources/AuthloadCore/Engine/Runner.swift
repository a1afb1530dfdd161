/// Runs a closed-model load: a fixed population of virtual users, each looping flow → think → flow.
///
/// Everything that waits or measures goes through the injected clock, so a run on a `ManualClock` and an
/// in-process transport covers hours of virtual time in seconds. All users are children of one task
/// group; the run ends at the planned end (or on a stop request) by draining: no new flows start,
/// in-flight flows may finish until `gracefulStop`, then whatever is left is cancelled.
///
/// ```swift
/// let runner = Runner(plan: plan, flows: flows, transport: transport, endpoint: endpoint, clock: ContinuousClock())
/// let outcome = await runner.run()
/// ```
public final class Runner<C: Clock>: Sendable where C.Duration == Duration {
    public let control: RunControl
    public let collector: Collector
    private let plan: RunPlan
    private let flows: [any Flow]
    private let cumulativeWeights: [Double]
    private let transport: any Transport
    private let endpoint: Endpoint
    private let clock: C
    private let recorder: MetricsRecorder
    private let catalog: MetricCatalog

    /// - Parameter flows: one implementation per `plan.flows` entry, in the same order.
    public init(plan: RunPlan, flows: [any Flow], transport: any Transport, endpoint: Endpoint, clock: C,
                control: RunControl = RunControl()) {
        precondition(flows.count == plan.flows.count && !flows.isEmpty, "one flow implementation per planned flow")
        self.plan = plan
        self.flows = flows
        var total = 0.0
        self.cumulativeWeights = plan.flows.map { total += $0.weight; return total }
        self.transport = transport
        self.endpoint = endpoint
        self.clock = clock
        self.control = control
        self.catalog = MetricCatalog(
            flows: zip(plan.flows, flows).map { ($0.name, $1.stepNames) },
            events: Dictionary(zip(plan.flows.map(\.name), flows.map(\.eventSteps)), uniquingKeysWith: { $0.union($1) }))
        self.recorder = MetricsRecorder(metricCount: catalog.count, interval: plan.interval)
        let stepIntervals = Int((plan.timeouts.step.seconds / plan.interval.seconds).rounded(.up))
        let thresholds: ThresholdEvaluator
        do {
            thresholds = try ThresholdEvaluator(thresholds: plan.thresholds, catalog: catalog, interval: plan.interval,
                                                judgedFrom: plan.load.rampUp, judgedUntil: plan.load.duration)
        } catch {
            preconditionFailure("thresholds must be validated before a run (Runner.validate): \(error)")
        }
        self.collector = Collector(catalog: catalog, recorder: recorder, lag: min(stepIntervals + 1, 120), thresholds: thresholds)
    }

    /// Checks what a run can only check once the flows are built: that every threshold names a flow or step.
    public static func validate(_ plan: RunPlan, flows: [any Flow]) throws(ProfileError) {
        let catalog = MetricCatalog(flows: zip(plan.flows, flows).map { ($0.name, $1.stepNames) })
        _ = try ThresholdEvaluator(thresholds: plan.thresholds, catalog: catalog, interval: plan.interval,
                                   judgedFrom: plan.load.rampUp, judgedUntil: plan.load.duration)
    }

    /// Runs the load to its end (or until stopped) and returns what it measured.
    public func run() async -> RunOutcome {
        let start = clock.now
        let end = start.advanced(by: plan.load.duration)
        var iterations = 0
        await withTaskGroup(of: Void.self) { outer in
            outer.addTask { await self.tickCollector(from: start) }
            iterations = await self.runUsers(start: start, end: end)
            outer.cancelAll()
        }
        let elapsed = start.duration(to: clock.now)
        let lastInterval = Int(max(0, elapsed.microseconds - 1) / plan.interval.microseconds)
        let abortedBy = collector.abortingThreshold
        return RunOutcome(
            measured: collector.finish(lastInterval: lastInterval, activeUsers: control.activeUsers, duration: elapsed),
            elapsed: elapsed, iterations: iterations, stoppedEarly: control.wasStopRequested && abortedBy == nil,
            abortedBy: abortedBy)
    }

    private enum Child: Sendable {
        case user(iterations: Int)
        case timekeeper
    }

    private func runUsers(start: C.Instant, end: C.Instant) async -> Int {
        await withTaskGroup(of: Child.self) { group in
            let users = plan.load.users
            for index in 0..<users {
                // User n starts at (n+1)/users of the ramp: after each k-th of it, exactly k·users/steps are active.
                let startAt = start.advanced(by: (plan.load.rampUp * (index + 1)) / users)
                let executor = transport.executor(forUser: index)
                group.addTask(executorPreference: executor) {
                    .user(iterations: await self.runUser(index, at: startAt, runStart: start, end: end, executor: executor))
                }
            }
            group.addTask {
                await self.keepTime(end: end)
                return .timekeeper
            }
            var remaining = users
            var iterations = 0
            while let child = await group.next() {
                switch child {
                case .user(let count):
                    iterations += count
                    remaining -= 1
                    if remaining == 0 { group.cancelAll() }
                case .timekeeper:
                    // Drained, out of grace, or told to cancel: whatever still runs is cancelled.
                    group.cancelAll()
                }
            }
            return iterations
        }
    }

    /// Waits for the planned end or a stop, starts draining, then waits for the drain to finish,
    /// the grace deadline, or a second stop.
    private func keepTime(end: C.Instant) async {
        let clock = self.clock
        let control = self.control
        await race({ try? await clock.sleep(until: end, tolerance: nil) }, { await control.stopRequested.wait() })
        guard !Task.isCancelled else { return }
        control.beginDraining()
        let graceEnd = clock.now.advanced(by: plan.load.gracefulStop)
        await race(
            { try? await clock.sleep(until: graceEnd, tolerance: nil) },
            { await control.drained.wait() },
            { await control.cancelRequested.wait() })
    }

    private func runUser(_ index: Int, at startAt: C.Instant, runStart: C.Instant, end: C.Instant,
                         executor: (any SerialExecutor & TaskExecutor)?) async -> Int {
        do {
            try await clock.sleep(until: startAt, tolerance: nil)
        } catch {
            return 0
        }
        guard clock.now < end, control.userStarted() else { return 0 }
        defer { control.userFinished() }
        let user = VirtualUser(index: index, identity: plan.users.identity(for: index), seed: plan.seed,
                               executor: executor)
        return await loop(user, runStart: runStart, end: end)
    }

    /// The user's life, run on the user's actor: one hop per user, not one per step.
    private func loop(_ user: isolated VirtualUser, runStart: C.Instant, end: C.Instant) async -> Int {
        var iterations = 0
        while clock.now < end, !Task.isCancelled, control.beginFlow() {
            await iterate(pickFlow(&user.random), user: user, runStart: runStart)
            control.endFlow()
            iterations += 1
            let think = user.random.duration(in: plan.load.thinkTime)
            // No think time: go straight on (a benchmark's tight loop) rather than through the clock.
            guard think > .zero else { continue }
            do {
                try await clock.sleep(until: min(clock.now.advanced(by: think), end), tolerance: nil)
            } catch {
                break
            }
        }
        return iterations
    }

    // Inlined into `loop`: every async call costs an executor check that takes the task's status lock
    // when the task prefers an executor (as users on a socket transport do), twice per iteration here.
    @inline(__always)
    private func iterate(_ flowIndex: Int, user: isolated VirtualUser, runStart: C.Instant) async {
        let flowStart = clock.now
        let client = transport.makeClient(for: endpoint)
        defer { client.shutdown() }
        let context = FlowContext(
            clock: clock, client: client, stepTimeout: plan.timeouts.step,
            deadline: flowStart.advanced(by: plan.timeouts.flow), recorder: recorder,
            firstStepMetric: catalog.stepMetric(flow: flowIndex, step: 0), shard: user.index, runStart: runStart)
        let outcome = await flows[flowIndex].run(context, user: user)
        recorder.record(metric: catalog.flowMetric(flowIndex), startOffset: runStart.duration(to: flowStart),
                        latency: flowStart.duration(to: clock.now), outcome: outcome, shard: user.index)
    }

    private func pickFlow(_ random: inout SplitMix64) -> Int {
        guard cumulativeWeights.count > 1, let total = cumulativeWeights.last else { return 0 }
        let point = Double.random(in: 0..<total, using: &random)
        return cumulativeWeights.firstIndex { point < $0 } ?? cumulativeWeights.count - 1
    }

    private func tickCollector(from start: C.Instant) async {
        var completed = 1
        while true {
            do {
                try await clock.sleep(until: start.advanced(by: plan.interval * completed), tolerance: nil)
            } catch {
                return
            }
            collector.tick(completed: completed, activeUsers: control.activeUsers)
            if !control.wasStopRequested, collector.abortingThreshold != nil { control.requestStop() }
            completed += 1
        }
    }
}

/// What ``Runner/run()`` returns.
public struct RunOutcome: Sendable {
    public var measured: MeasuredRun
    /// From the first user's start to the last sample, on the run's clock.
    public var elapsed: Duration
    /// Flow iterations started, over all users.
    public var iterations: Int
    /// A stop request (a signal) ended the run before its planned end.
    public var stoppedEarly: Bool
    /// The `abortOnFail` threshold whose failure ended the run early, if one did.
    public var abortedBy: Threshold?
}
