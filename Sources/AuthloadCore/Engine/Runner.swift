/// Runs a load: a closed population of virtual users looping flow → think → flow, or open-model arrivals
/// that each run one flow and leave (`Runner+Closed.swift`, `Runner+Open.swift`).
///
/// Everything that waits or measures goes through the injected clock, so a run on a `ManualClock` and an
/// in-process transport covers hours of virtual time in seconds. All users are children of one task
/// group; the run ends at the planned end (or on a stop request) by draining: no new flows start,
/// in-flight flows may finish until `gracefulStop`, then whatever is left is cancelled. The generator's
/// own schedule lag and dropped arrivals are measured alongside (``GeneratorHealth``).
///
/// ```swift
/// let runner = Runner(plan: plan, flows: flows, transport: transport, endpoint: endpoint, clock: ContinuousClock())
/// let outcome = await runner.run()
/// ```
public final class Runner<C: Clock>: Sendable where C.Duration == Duration {
    public let control: RunControl
    public let collector: Collector
    public let health: GeneratorHealth
    /// When ``run()`` began, for checkpoints taken while it goes on.
    private let started = Locked<C.Instant?>(nil)
    let plan: RunPlan
    let flows: [any Flow]
    let cumulativeWeights: [Double]
    let transport: any Transport
    let endpoint: Endpoint
    /// The one client of the endpoint's shared pool, asked for once per run when users share connections
    /// (`connections.policy` `shared`): asking per flow iteration cost every request a lock and a hash.
    let sharedClient: (any HTTPClient)?
    let clock: C
    let recorder: MetricsRecorder
    let catalog: MetricCatalog
    let hooks: RunHooks
    /// A user template holds `{iteration}`: each iteration fills the user's identity again.
    let identityVariesByIteration: Bool

    /// - Parameters:
    ///   - flows: one implementation per `plan.flows` entry, in the same order.
    ///   - hooks: seams for tests (a stalled generator); none in production.
    public init(
        plan: RunPlan, flows: [any Flow], transport: any Transport, endpoint: Endpoint, clock: C,
        control: RunControl = RunControl(), hooks: RunHooks = RunHooks()
    ) {
        precondition(flows.count == plan.flows.count && !flows.isEmpty, "one flow implementation per planned flow")
        self.plan = plan
        self.flows = flows
        var total = 0.0
        self.cumulativeWeights = plan.flows.map {
            total += $0.weight
            return total
        }
        self.transport = transport
        self.endpoint = endpoint
        self.sharedClient = plan.connections.poolSize == nil ? nil : transport.makeClient(for: endpoint)
        self.clock = clock
        self.control = control
        self.hooks = hooks
        self.identityVariesByIteration = plan.users.variesByIteration
        // As many recording shards as threads that record: each thread then writes to its own (see Transport.userThreads).
        let shards = transport.userThreads
        self.health = GeneratorHealth(interval: plan.interval, shardCount: shards ?? 8)
        self.catalog = MetricCatalog(
            flows: zip(plan.flows, flows).map { ($0.name, $1.stepNames) },
            events: Dictionary(zip(plan.flows.map(\.name), flows.map(\.eventSteps)), uniquingKeysWith: { $0.union($1) }))
        self.recorder = MetricsRecorder(metricCount: catalog.count, interval: plan.interval, shardCount: shards ?? 16)
        let stepIntervals = Int((plan.timeouts.step.seconds / plan.interval.seconds).rounded(.up))
        let thresholds: ThresholdEvaluator
        do {
            thresholds = try ThresholdEvaluator(
                thresholds: plan.thresholds, catalog: catalog, interval: plan.interval,
                judgedFrom: plan.load.steadyFrom, judgedUntil: plan.load.duration)
        } catch {
            preconditionFailure("thresholds must be validated before a run (Runner.validate): \(error)")
        }
        // A flow that started in an interval can run up to the flow timeout: only then is the interval complete.
        let flowIntervals = Int((plan.timeouts.flow.seconds / plan.interval.seconds).rounded(.up))
        self.collector = Collector(
            catalog: catalog, recorder: recorder, lag: min(stepIntervals + 1, 120), horizon: flowIntervals + 2,
            thresholds: thresholds, load: plan.load, health: health, unreachableAfter: plan.generator.unreachableAfter)
    }

    /// Checks what a run can only check once the flows are built: that every threshold names a flow or step.
    public static func validate(_ plan: RunPlan, flows: [any Flow]) throws(ProfileError) {
        let catalog = MetricCatalog(flows: zip(plan.flows, flows).map { ($0.name, $1.stepNames) })
        _ = try ThresholdEvaluator(
            thresholds: plan.thresholds, catalog: catalog, interval: plan.interval,
            judgedFrom: plan.load.steadyFrom, judgedUntil: plan.load.duration)
    }

    /// Runs the load to its end (or until stopped) and returns what it measured.
    ///
    /// Specialized for `ContinuousClock`, which every real run uses, and `SimulationClock`, which every simulation
    /// uses: the engine below it (scheduling, turns, flow contexts) then runs as concrete code instead of looking up
    /// generic metadata every flow iteration. Flows are not:
    /// a specialized async frame keeps every local of the function while it waits, so every user waiting inside a flow
    /// (a login's hold, a GCCS status stream) would hold kilobytes more for a small saving of CPU (the figures are in
    /// docs/development.md, "Measured design choices").
    @_specialize(exported:true,where C == ContinuousClock)
    @_specialize(exported:true,where C == SimulationClock)
    public func run() async -> RunOutcome {
        let start = clock.now
        started.withLock { $0 = start }
        let end = start.advanced(by: plan.load.duration)
        var iterations = 0
        // One live task for the timekeeper, held past its end until the run has read the clock for the last
        // time: a virtual-time driver must not see the run as quiet while it winds down.
        control.taskStarted()
        defer { control.taskEnded() }
        await withTaskGroup(of: Void.self) { outer in
            control.taskStarted()
            outer.addTask {
                defer { self.control.taskEnded() }
                await self.tickCollector(from: start)
            }
            switch plan.load.model {
            case .closed: iterations = await self.runUsers(start: start, end: end)
            case .open: iterations = await self.runArrivals(start: start, end: end)
            }
            outer.cancelAll()
        }
        let elapsed = start.duration(to: clock.now)
        let lastInterval = Int(max(0, elapsed.microseconds - 1) / plan.interval.microseconds)
        let abortedBy = collector.abortingThreshold
        let unreachable = abortedBy == nil ? collector.unreachable : nil
        return RunOutcome(
            measured: collector.finish(lastInterval: lastInterval, activeUsers: control.activeUsers, duration: elapsed),
            elapsed: elapsed, iterations: iterations, stoppedEarly: control.wasStopRequested && abortedBy == nil && unreachable == nil,
            abortedBy: abortedBy, unreachable: unreachable, generator: health.report(model: plan.load.model, limits: plan.generator),
            peaks: peaks)
    }

    /// Time on the run's clock since ``run()`` began; nil before. A simulation's progress line reads it from wall time.
    public var elapsed: Duration? {
        started.withLock { $0 }.map { $0.duration(to: clock.now) }
    }

    /// What the run has measured so far, while it goes on: for a checkpoint, with the time-series rows
    /// numbered `firstRow` on (those not yet saved). Nil before the run starts.
    public func checkpoint(rowsFrom firstRow: Int = 0) -> RunOutcome? {
        guard let start = started.withLock({ $0 }) else { return nil }
        let elapsed = start.duration(to: clock.now)
        return RunOutcome(
            measured: collector.snapshot(duration: elapsed, rowsFrom: firstRow), elapsed: elapsed, iterations: 0, stoppedEarly: false,
            abortedBy: nil, unreachable: nil, generator: health.report(model: plan.load.model, limits: plan.generator), peaks: peaks)
    }

    private var peaks: [PeakReading] {
        zip(plan.flows, flows).flatMap { plan, flow in
            flow.gauges.sorted { $0.key < $1.key }.map { PeakReading(flow: plan.name, name: $0.key, peak: $0.value.peak) }
        }
    }

    /// The run's users' tasks: isolated to the transport's one executor where it asks for that (a simulation), each
    /// preferring its user's executor otherwise.
    func userTasks() -> UserTasks {
        UserTasks(isolatedTo: transport.isolatesUserTasks ? transport.executor(forUser: plan.shard?.index ?? 0) : nil)
    }

    /// Waits for the planned end or a stop, starts draining, then waits for the drain to finish,
    /// the grace deadline, or a second stop.
    ///
    /// - Parameter generated: set by the open model's generator once it has handled every arrival due before the end;
    ///   the run drains at the end only once it is, or ``endSlack`` after the end: the generator wakes on its thread's
    ///   timers, a round of I/O after the instant, and an arrival due just before the end that it reaches a moment after
    ///   it still starts. A generator stalled for longer finds the run draining and counts what it had left dropped.
    /// - Returns: true when every flow finished inside the grace period (nothing is left to cancel).
    @discardableResult
    func keepTime(end: C.Instant, generated: AsyncFlag? = nil) async -> Bool {
        let clock = self.clock
        let control = self.control
        await race({ try? await clock.sleep(until: end, tolerance: nil) }, { await control.stopRequested.wait() })
        guard !Task.isCancelled else { return false }
        if let generated, !generated.isSet, !control.wasStopRequested {
            let slackEnd = end.advanced(by: Self.endSlack)
            await race(
                { try? await clock.sleep(until: slackEnd, tolerance: nil) },
                { await generated.wait() },
                { await control.stopRequested.wait() })
            guard !Task.isCancelled else { return false }
        }
        control.beginDraining()
        let graceEnd = clock.now.advanced(by: plan.load.gracefulStop)
        await race(
            { try? await clock.sleep(until: graceEnd, tolerance: nil) },
            { await control.drained.wait() },
            { await control.cancelRequested.wait() })
        return control.drained.isSet && !control.cancelRequested.isSet
    }

    /// How long after the end the run waits for the open model's generator to reach the arrivals due before it.
    static var endSlack: Duration { .milliseconds(10) }

    /// A flow's client and context, made for one iteration.
    @inline(never)
    func beginTurn(_ flowIndex: Int, user: isolated VirtualUser, runStart: C.Instant, now: C.Instant?, due: C.Instant?)
        -> FlowTurn<C>
    {
        let client: any HTTPClient
        if let sharedClient {
            client = sharedClient
        } else if plan.connections.lifetime == .user {
            // Kept alive across iterations; ``leave(_:)`` closes it when the user's life ends.
            client = user.client ?? transport.makeClient(for: endpoint)
            user.client = client
        } else {
            client = transport.makeClient(for: endpoint)
        }
        // Data a server accepts once (an invitation code) differs per iteration only when its template says so.
        if identityVariesByIteration, user.iterations > 0 {
            user.identity = plan.users.identity(for: user.index, iteration: user.iterations)
        }
        user.iterations += 1
        let flowStart = due ?? now ?? clock.now
        let context = FlowContext(
            clock: clock, client: client, stepTimeout: plan.timeouts.step, deadline: flowStart.advanced(by: plan.timeouts.flow),
            recorder: recorder, firstStepMetric: catalog.stepMetric(flow: flowIndex, step: 0), shard: user.index,
            runStart: runStart, due: due, now: flowStart)
        return FlowTurn(flowIndex: flowIndex, client: client, context: context)
    }

    /// Records the flow that `turn` ran and closes a client made for it alone.
    ///
    /// - Returns: when the flow ended.
    @inline(never)
    func endTurn(_ turn: FlowTurn<C>, outcome: Outcome, user: isolated VirtualUser) -> C.Instant {
        let end = clock.now
        // Consecutive flows that found no server: the closed model backs off on them (``ConnectionBackoff``).
        if outcome.isConnectionFailure {
            user.connectionFailures += 1
        } else if outcome.kind != .cancelled {
            user.connectionFailures = 0
        }
        let flowStart = turn.context.flowStart
        recorder.record(
            metric: catalog.flowMetric(turn.flowIndex), startOffset: turn.context.runStart.duration(to: flowStart),
            latency: flowStart.duration(to: end), outcome: outcome, shard: user.index)
        if plan.connections.lifetime == .iteration { turn.client.shutdown() }
        return end
    }

    /// Ends a user's life: closes the connections it kept across iterations, if it kept any.
    func leave(_ user: isolated VirtualUser) {
        user.client?.shutdown()
        user.client = nil
    }

    func pickFlow(_ random: inout SplitMix64) -> Int {
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
            if !control.wasStopRequested, collector.abortingThreshold != nil || collector.unreachable != nil { control.requestStop() }
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
    /// Why the run stopped early when nothing succeeded for `generator.unreachableAfter` (``Reachability``).
    public var unreachable: UnreachableVerdict?
    /// Whether the generator kept its schedule: lag, dropped arrivals.
    public var generator: GeneratorReport
    /// The peak of every gauge the flows keep (concurrent refreshes).
    public var peaks: [PeakReading]
}

/// Seams for tests; production runs use none.
public struct RunHooks: Sendable {
    /// Runs in the open-model generator before it handles each due arrival (its number, and its offset from
    /// the start). A test sleeps here on its clock to stall the generator as an overloaded process would.
    public var beforeArrival: (@Sendable (_ number: Int, _ due: Duration) async -> Void)?

    /// Called when the open model starts a worker, a task that runs arrivals one after another, with the number of
    /// the arrival it starts with: a test counts the tasks a run's arrivals took.
    public var workerStarted: (@Sendable (_ number: Int) -> Void)?

    public init(
        beforeArrival: (@Sendable (_ number: Int, _ due: Duration) async -> Void)? = nil,
        workerStarted: (@Sendable (_ number: Int) -> Void)? = nil
    ) {
        self.beforeArrival = beforeArrival
        self.workerStarted = workerStarted
    }
}

/// What one flow iteration keeps from its start to its record, in one object rather than in its caller's async frame.
final class FlowTurn<C: Clock>: Sendable where C.Duration == Duration {
    let flowIndex: Int
    let client: any HTTPClient
    let context: FlowContext<C>

    init(flowIndex: Int, client: any HTTPClient, context: FlowContext<C>) {
        self.flowIndex = flowIndex
        self.client = client
        self.context = context
    }
}
