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

    func run<C: Clock>(_ context: FlowContext<C>, user: isolated VirtualUser) async -> Outcome
        where C.Duration == Duration
}

extension Flow {
    public var eventSteps: Set<String> { [] }
}

/// What a flow iteration may use: the clock, its HTTP client, its deadlines, and the recorder.
public struct FlowContext<C: Clock>: Sendable where C.Duration == Duration {
    public let clock: C
    public let client: any HTTPClient
    /// Longest one request may take; the flow deadline may cut it shorter.
    public let stepTimeout: Duration
    /// When the whole flow iteration times out.
    public let deadline: C.Instant
    let recorder: MetricsRecorder
    let firstStepMetric: Int
    let shard: Int
    let runStart: C.Instant

    public init(clock: C, client: any HTTPClient, stepTimeout: Duration, deadline: C.Instant,
                recorder: MetricsRecorder, firstStepMetric: Int, shard: Int, runStart: C.Instant) {
        self.clock = clock
        self.client = client
        self.stepTimeout = stepTimeout
        self.deadline = deadline
        self.recorder = recorder
        self.firstStepMetric = firstStepMetric
        self.shard = shard
        self.runStart = runStart
    }

    /// Sends one request as step number `step`, classifies the response and records the sample.
    ///
    /// The request gets the step timeout or what is left of the flow's, whichever is shorter. A response's
    /// latency is the transport's own measure (hand-off to the transport → last byte parsed), as wrk
    /// measures: the generator's task scheduling after that must not pass for server time. A request
    /// without a response counts the time on the clock until it failed.
    ///
    /// It runs in the caller's isolation (the user's actor), and so does the client's `execute`: hopping
    /// off the actor and back for every request cost more than the rest of the engine's work.
    public func exchange(step: Int, _ request: HTTPRequest, isolation: isolated (any Actor)? = #isolation,
                         classify: (HTTPResponse) -> Outcome) async -> StepResult {
        let start = clock.now
        let timeout = min(stepTimeout, start.duration(to: deadline))
        let result: StepResult
        if timeout <= .zero {
            result = StepResult(response: nil, outcome: Outcome(.timeout, "flow deadline passed"))
        } else {
            do {
                let response = try await client.execute(request, timeout: timeout, isolation: isolation)
                result = StepResult(response: response, outcome: classify(response))
            } catch {
                result = StepResult(response: nil, outcome: Outcome(error))
            }
        }
        record(step: step, start: start, outcome: result.outcome, latency: result.response?.timing.total)
        return result
    }

    /// Records a step that is not one request (e.g. waiting for a status message).
    ///
    /// - Parameter latency: the step's duration when measured elsewhere; by default, start → now on the clock.
    public func record(step: Int, start: C.Instant, outcome: Outcome, latency: Duration? = nil) {
        recorder.record(metric: firstStepMetric + step, startOffset: runStart.duration(to: start),
                        latency: latency ?? start.duration(to: clock.now), outcome: outcome, shard: shard)
    }

    /// Waits inside the flow (e.g. a user looking at the app between login and logout).
    ///
    /// - Returns: `.ok`, a timeout when the flow deadline comes first, or `.cancelled`.
    public func pause(for duration: Duration) async -> Outcome {
        let wake = clock.now.advanced(by: duration)
        do {
            try await clock.sleep(until: min(wake, deadline), tolerance: nil)
        } catch {
            return .cancelled
        }
        return wake > deadline ? Outcome(.timeout, "flow deadline passed") : .ok
    }
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
