import AuthloadTesting
import Synchronization
import Testing

@testable import AuthloadCore

/// A wait on the run's clock that no task of the flow awaits: a task of its own sleeps and calls back, as a socket's
/// loop would when its status stream ends.
final class SleepHold<C: Clock>: FlowHold, Sendable where C.Duration == Duration {
    let clock: C
    let wake: C.Instant
    /// What the flow does once the wait ended, with whether it was cancelled.
    let then: @Sendable (_ cancelled: Bool) async -> FlowProgress
    private let sleeper = Mutex<Task<Void, Never>?>(nil)
    private let cancelled = Atomic<Bool>(false)

    init(clock: C, wake: C.Instant, then: @escaping @Sendable (_ cancelled: Bool) async -> FlowProgress) {
        self.clock = clock
        self.wake = wake
        self.then = then
    }

    func start(then done: @escaping @Sendable () -> Void) {
        let task = Task { [self] in
            if !cancelled.load(ordering: .relaxed), (try? await clock.sleep(until: wake, tolerance: nil)) == nil {
                cancelled.store(true, ordering: .relaxed)
            }
            done()
        }
        sleeper.withLock { $0 = task }
        if cancelled.load(ordering: .relaxed) { task.cancel() }
    }

    func cancel() {
        cancelled.store(true, ordering: .relaxed)
        sleeper.withLock { $0?.cancel() }
    }

    func resume(user: isolated VirtualUser) async -> FlowProgress {
        await then(cancelled.load(ordering: .relaxed))
    }
}

/// Two requests with a wait between them, which ``start(_:user:)`` hands to the engine when `holds` (twice, split in
/// halves, so that a held flow's resumption may hold again), and ``run(_:user:)`` waits on its task.
struct HeldPingFlow: Flow {
    let wait: Duration
    let holds: Bool

    var stepNames: [String] { ["first", "second"] }

    func run<C: Clock>(_ context: FlowContext<C>, user: isolated VirtualUser) async -> Outcome where C.Duration == Duration {
        let first = await ping(context, step: 0)
        guard first.isOK else { return first }
        guard case .ok = await context.pause(for: wait) else { return .cancelled }
        return await ping(context, step: 1)
    }

    func start<C: Clock>(_ context: FlowContext<C>, user: isolated VirtualUser) async -> FlowProgress where C.Duration == Duration {
        guard holds else { return .ended(await run(context, user: user)) }
        let first = await ping(context, step: 0)
        guard first.isOK else { return .ended(first) }
        let (clock, half) = (context.clock, wait / 2)
        return .held(
            SleepHold(clock: clock, wake: clock.now.advanced(by: half)) { cancelled in
                guard !cancelled else { return .ended(.cancelled) }
                return .held(
                    SleepHold(clock: clock, wake: clock.now.advanced(by: half)) { cancelled in
                        cancelled ? .ended(.cancelled) : .ended(await ping(context, step: 1))
                    })
            })
    }

    private func ping<C: Clock>(_ context: FlowContext<C>, step: Int, isolation: isolated (any Actor)? = #isolation) async -> Outcome
    where C.Duration == Duration {
        await context.exchange(step: step, HTTPRequest(method: "GET", target: "/ping"), isolation: isolation) { response in
            response.status == 200 ? .ok : Outcome(.httpError, "\(response.status)")
        }.outcome
    }
}

/// A hold that only counts its cancels.
final class CountingHold: FlowHold {
    let cancels: Locked<Int>

    init(cancels: Locked<Int>) { self.cancels = cancels }

    func start(then done: @escaping @Sendable () -> Void) { done() }
    func cancel() { cancels.withLock { $0 += 1 } }
    func resume(user: isolated VirtualUser) async -> FlowProgress { .ended(.ok) }
}

@Suite("Closed-model flows that hand a wait to the engine", .timeLimit(.minutes(1)))
struct HeldFlowTests {
    let endpoint = Endpoint(host: "127.0.0.1", port: 1)

    func run(_ plan: RunPlan, flow: HeldPingFlow, until seconds: Int) async -> RunOutcome {
        let clock = ManualClock()
        let transport = SimulatedTransport(clock: clock) { _, _ in ServiceReply(HTTPResponse(status: 200), after: .milliseconds(50)) }
        let runner = Runner(plan: plan, flows: [flow], transport: transport, endpoint: endpoint, clock: clock)
        let run = Task { await runner.run() }
        await clock.run(until: clock.now.advanced(by: .seconds(seconds)), quiet: runner.control)
        return await run.value
    }

    @Test(
        "a held flow's turn goes on in a new task: the same iterations, steps and times as a flow that waits on its task",
        // 50 ms, the wait, 50 ms, then the think time (or none: straight on in the same turn); no flow runs at the end.
        arguments: [(Duration.milliseconds(900), Duration.seconds(2), 60), (.zero, .milliseconds(1_900), 59)])
    func heldLikeWaited(think: Duration, wait: Duration, seconds: Int) async throws {
        let plan = RunPlan.closed(users: 3, duration: .seconds(seconds), think: think)
        let waited = await run(plan, flow: HeldPingFlow(wait: wait, holds: false), until: 60)
        let held = await run(plan, flow: HeldPingFlow(wait: wait, holds: true), until: 60)
        #expect(held.iterations == waited.iterations)
        #expect(held.iterations == 3 * 20 + (think == .zero ? 3 * 10 : 0))
        #expect(held.elapsed == waited.elapsed)
        for step in [nil, "first", "second"] {
            let a = try #require(waited.measured.metrics.first { $0.id.step == step })
            let b = try #require(held.measured.metrics.first { $0.id.step == step })
            #expect(b.count == a.count && b.errors == 0 && b.p50Micros == a.p50Micros && b.maxMicros == a.maxMicros, "\(step ?? "flow")")
        }
    }

    @Test("flows held at the end of the grace period are cancelled and counted as such, and the run ends on time")
    func graceCancelsHolds() async throws {
        let plan = RunPlan.closed(users: 2, duration: .seconds(5), think: .zero, stepTimeout: .seconds(60), grace: .seconds(2))
        let outcome = await run(plan, flow: HeldPingFlow(wait: .seconds(60), holds: true), until: 7)
        let flow = try #require(outcome.measured.metrics.first { $0.id.step == nil })
        #expect(flow.count == 2)
        #expect(outcome.measured.errors.contains { $0.kind == .cancelled && $0.id.step == nil && $0.count == 2 })
        #expect(outcome.elapsed == .seconds(7))
    }

    @Test("a hold counts as running until the task that goes on with it ends, and one held after the cancel is cancelled at once")
    func holdsAreTasks() async {
        let tasks = UserTasks()
        let cancels = Locked(0)
        let first = tasks.hold(7, CountingHold(cancels: cancels))
        let idle = Task { await tasks.waitUntilNoneRun() }
        tasks.cancelAll()
        #expect(cancels.withLock { $0 } == 1)
        let second = tasks.hold(7, CountingHold(cancels: cancels))
        #expect(cancels.withLock { $0 } == 2)
        let ran = Locked<[Bool]>([])
        for number in [first, second] {
            tasks.resume(number, key: 7, executorPreference: nil) { ran.withLock { $0.append(Task.isCancelled) } }
        }
        await idle.value
        #expect(ran.withLock { $0 } == [true, true])
    }
}
