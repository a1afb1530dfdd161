import Synchronization

/// One authentication flow a virtual user can run, as a sequence of measured steps.
///
/// A flow runs on its user's actor (`user: isolated`), so it reads and writes the user's session
/// state directly. It measures each step through its ``FlowContext`` and returns how it ended;
/// the runner records the flow as a whole.
public protocol Flow: Sendable {
    /// The step names, in order; step numbers passed to the context index this list.
    var stepNames: [String] { get }

    /// Steps that time something the flow observed (a status pushed by the server, the gap between two)
    /// rather than a request it sent: they are reported like steps but not counted as requests.
    var eventSteps: Set<String> { get }

    /// Columns of the user data this flow reads besides `username` and `password` (e.g. `invitationCode`);
    /// a profile whose users lack one is refused before the run.
    var userFields: Set<String> { get }

    /// Columns among ``userFields`` a server accepts only once (an invitation code, redeemed at every login): a
    /// user that runs the flow again needs a new value, from a template with `{iteration}`; `validate` warns otherwise.
    var singleUseFields: Set<String> { get }

    /// Gauges the flow keeps across all its users, by name (`concurrent refreshes`); each peak is reported.
    var gauges: [String: ConcurrencyGauge] { get }

    func run<C: Clock>(_ context: FlowContext<C>, user: isolated VirtualUser) async -> Outcome
    where C.Duration == Duration

    /// Runs the flow as ``run(_:user:)`` does, up to its end or to a long wait it hands to the engine (``FlowHold``):
    /// the closed model's turns run flows this way; by default, the whole of ``run(_:user:)``.
    func start<C: Clock>(_ context: FlowContext<C>, user: isolated VirtualUser) async -> FlowProgress
    where C.Duration == Duration
}

extension Flow {
    public var eventSteps: Set<String> { [] }
    public var userFields: Set<String> { [] }
    public var singleUseFields: Set<String> { [] }
    public var gauges: [String: ConcurrencyGauge] { [:] }

    public func start<C: Clock>(_ context: FlowContext<C>, user: isolated VirtualUser) async -> FlowProgress
    where C.Duration == Duration {
        .ended(await run(context, user: user))
    }
}

/// What a flow iteration may use: the clock, its HTTP client, its deadlines, and the recorder.
public struct FlowContext<C: Clock>: Sendable where C.Duration == Duration {
    public let clock: C
    /// The transport's client for this iteration, counting every request it sends; flows reach it through
    /// ``send(_:isolation:)``, ``exchange(step:_:isolation:classify:)`` and ``openWebSocket(_:protocols:timeout:)``.
    let client: CountingClient
    /// Longest one request may take; the flow deadline may cut it shorter.
    public let stepTimeout: Duration
    /// When the whole flow iteration times out.
    public let deadline: C.Instant
    let recorder: MetricsRecorder
    let firstStepMetric: Int
    let shard: Int
    let runStart: C.Instant
    /// When the iteration counts from: its due instant, or when it began. Steps timed from the flow's start
    /// (a pushed status) count from here.
    public let flowStart: C.Instant
    /// When the flow was due to start (an open-model arrival's intended instant), for the first request sent, the one
    /// that carries a late start's wait; nil when the flow started on time.
    private let lateStart: LateStart?

    /// - Parameters:
    ///   - due: the instant the flow was scheduled to start; the first step's latency counts from it,
    ///     so a generator that started the flow late cannot hide the wait (no coordinated omission).
    ///   - now: the clock's reading when the flow began, if the caller has just taken it; read here otherwise.
    public init(
        clock: C, client: any HTTPClient, stepTimeout: Duration, deadline: C.Instant,
        recorder: MetricsRecorder, firstStepMetric: Int, shard: Int, runStart: C.Instant, due: C.Instant? = nil,
        now: C.Instant? = nil
    ) {
        self.clock = clock
        // The catalog numbers a flow's series just before its first step's.
        self.client = CountingClient(base: client, recorder: recorder, flowMetric: firstStepMetric - 1, shard: shard)
        self.stepTimeout = stepTimeout
        self.deadline = deadline
        self.recorder = recorder
        self.firstStepMetric = firstStepMetric
        self.shard = shard
        self.runStart = runStart
        flowStart = due ?? now ?? clock.now
        lateStart = due.map { LateStart(dueOffset: runStart.duration(to: $0)) }
    }

    /// Sends one request as step number `step`, classifies the response and records the sample.
    ///
    /// The request gets the step timeout or what is left of the flow's, whichever is shorter. A response's
    /// latency is the transport's own measure (hand-off to the transport → the loop's wake-up that read the
    /// last byte), much as wrk measures: the generator's task scheduling after that must not pass for server
    /// time. A request without a response counts the time on the clock until it failed. The first request of a
    /// flow that started after it was due counts from the due instant instead (see ``send(_:isolation:)``).
    ///
    /// It runs in the caller's isolation (the user's actor), and so does the client's `execute`: hopping
    /// off the actor and back for every request cost more than the rest of the engine's work.
    @_specialize(exported:true,where C == SimulationClock)
    public func exchange(
        step: Int, _ request: HTTPRequest, isolation: isolated (any Actor)? = #isolation,
        classify: (HTTPResponse) -> Outcome
    ) async -> StepResult {
        var startOffset = Duration.zero
        var outcome = Outcome.ok
        let response = await sendMeasured(
            request, isolation: isolation, recording: step, sentAt: &startOffset, outcome: &outcome, classify: classify)
        return StepResult(response: response, outcome: outcome)
    }

    /// Sends one request under the step timeout (or what is left of the flow's) without recording it, for
    /// a flow that decides from the response which step it was (a 401 that is an expected token expiry).
    ///
    /// The first request an open-model flow sends after its due instant carries the wait: its start is the
    /// due instant and its response's `timing.total` includes the wait, so a generator that started the
    /// flow late cannot hide it (no coordinated omission), whichever step records it. Later requests, a
    /// re-login's among them, count from when they were sent.
    ///
    /// - Returns: when it was sent, and the response (outcome `.ok`, not yet classified) or the outcome of getting none.
    @_specialize(exported:true,where C == SimulationClock)
    @inline(__always)
    public func send(_ request: HTTPRequest, isolation: isolated (any Actor)? = #isolation) async -> (start: C.Instant, result: StepResult)
    {
        var startOffset = Duration.zero
        var outcome = Outcome.ok
        let response = await sendMeasured(request, isolation: isolation, recording: nil, sentAt: &startOffset, outcome: &outcome)
        return (runStart.advanced(by: startOffset), StepResult(response: response, outcome: outcome))
    }

    /// What ``send(_:isolation:)`` does, with the start as an offset from the run's start and the response's outcome
    /// decided by `classify` (`.ok` by default); records the sample as `step` unless it is nil.
    ///
    /// Inlined into ``exchange(step:_:isolation:classify:)``, every flow's usual path: each async call level costs
    /// two executor checks, and each check takes the task's status lock when the task prefers an executor. The
    /// result is built once, in the branch that has it, and returned: flows run unspecialized, where each
    /// intermediate copy of a response (a variable assigned later, a struct wrapping it) went through value
    /// witnesses that retain every one of its buffers, three copies a request. The sample is recorded here, from the
    /// response before it moves into the result, for the same reason: recorded by the caller from the result it got
    /// back, the result was copied whole (a retain and a release of each buffer) and its response again to read its latency.
    ///
    /// - Parameter startOffset: set to when the request counts from: when it was sent, or a late flow's due instant.
    @inline(__always)
    func sendMeasured(
        _ request: HTTPRequest, isolation: isolated (any Actor)?, recording step: Int?, sentAt startOffset: inout Duration,
        outcome: inout Outcome, classify: (HTTPResponse) -> Outcome = { _ in .ok }
    ) async -> HTTPResponse? {
        let start = clock.now
        let sent = runStart.duration(to: start)
        let late = lateness(sentAt: sent)
        startOffset = sent - late
        let timeout = min(stepTimeout, start.duration(to: deadline))
        guard timeout > .zero else {
            outcome = Outcome(.timeout, "flow deadline passed")
            if let step { record(step: step, startOffset: startOffset, outcome: outcome, latency: nil) }
            return nil
        }
        do {
            let response = try await client.execute(request, timeout: timeout, sentAt: sent, isolation: isolation)
            // Classified before it moves into the result: handing it on while it is still to be read would copy it.
            // Only a late flow's first request makes a changed copy, to add its wait.
            guard late > .zero else {
                outcome = classify(response)
                if let step { record(step: step, startOffset: startOffset, outcome: outcome, latency: response.timing.total) }
                return response
            }
            var waited = response
            waited.timing.total += late
            outcome = classify(waited)
            if let step { record(step: step, startOffset: startOffset, outcome: outcome, latency: waited.timing.total) }
            return waited
        } catch {
            outcome = Outcome(error)
            if let step { record(step: step, startOffset: startOffset, outcome: outcome, latency: nil) }
            return nil
        }
    }

    /// Opens a WebSocket on this iteration's client (see ``HTTPClient/openWebSocket(_:protocols:timeout:)``), counting its
    /// upgrade request.
    public func openWebSocket(_ request: HTTPRequest, protocols: [String], timeout: Duration) async throws -> any WebSocketConnection {
        try await client.openWebSocket(request, protocols: protocols, timeout: timeout, sentAt: runStart.duration(to: clock.now))
    }

    /// How long after its due instant the flow's first request was sent; zero for every later request and
    /// for a flow without a due instant.
    ///
    /// - Parameter startOffset: when the request was sent, from the start of the run.
    func lateness(sentAt startOffset: Duration) -> Duration {
        guard let lateStart, lateStart.take() else { return .zero }
        return Swift.max(.zero, startOffset - lateStart.dueOffset)
    }

    /// Records a step that is not one request (e.g. waiting for a status message).
    ///
    /// - Parameter latency: the step's duration when measured elsewhere; by default, start → now on the clock.
    @_specialize(exported:true,where C == SimulationClock)
    public func record(step: Int, start: C.Instant, outcome: Outcome, latency: Duration? = nil) {
        record(step: step, startOffset: runStart.duration(to: start), outcome: outcome, latency: latency)
    }

    /// ``record(step:start:outcome:latency:)`` with the start as an offset from the run's start.
    func record(step: Int, startOffset: Duration, outcome: Outcome, latency: Duration?) {
        recorder.record(
            metric: firstStepMetric + step, startOffset: startOffset,
            latency: latency ?? runStart.duration(to: clock.now) - startOffset, outcome: outcome, shard: shard)
    }

    /// Waits inside the flow (e.g. a user looking at the app between login and logout).
    ///
    /// It runs in the caller's isolation (the user's actor). On a simulation's clock it waits there too, and the
    /// simulation resumes it there: a pause costs one job, where hopping off the actor to sleep and back cost three.
    ///
    /// Inlined into the flows (`@inlinable`): its own entry and the return from its wait were two executor checks a
    /// pause, each taking the task's status-record lock. Its locals are few, so the flows' frames barely grow (unlike
    /// the request methods', docs/development.md).
    ///
    /// - Returns: `.ok`, a timeout when the flow deadline comes first, or `.cancelled`.
    @_specialize(exported:true,where C == SimulationClock)
    @inlinable @inline(__always)
    public func pause(for duration: Duration, isolation: isolated (any Actor)? = #isolation) async -> Outcome {
        let wake = clock.now.advanced(by: duration)
        let until = min(wake, deadline)
        do {
            // The cast is no cost in a flow specialized for the simulation's clock, and one class check per pause elsewhere.
            if let simulation = clock as? SimulationClock, let until = until as? SimulationClock.Instant {
                try await simulation.wait(until: until, isolation: isolation)
            } else {
                try await clock.sleep(until: until, tolerance: nil)
            }
        } catch {
            return .cancelled
        }
        return wake > deadline ? Outcome(.timeout, "flow deadline passed") : .ok
    }
}

/// A late flow's due instant, taken once: by its first request, which carries the wait.
///
/// Kept as an offset from the run's start rather than a `C.Instant`, as is a request's start on its way from
/// ``FlowContext/sendMeasured(_:isolation:sentAt:classify:)``: flows run unspecialized, and every generic value on a
/// request's path cost it a metadata look-up.
final class LateStart: Sendable {
    let dueOffset: Duration
    private let taken = Atomic<Bool>(false)

    init(dueOffset: Duration) { self.dueOffset = dueOffset }

    /// True for the first caller only.
    func take() -> Bool { !taken.exchange(true, ordering: .relaxed) }
}

/// A step's response, if one came, and how the step was classified.
public struct StepResult: Sendable {
    public var response: HTTPResponse?
    public var outcome: Outcome

    public init(response: HTTPResponse?, outcome: Outcome) {
        self.response = response
        self.outcome = outcome
    }
}
