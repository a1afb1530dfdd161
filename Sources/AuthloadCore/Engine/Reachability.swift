/// Whether the target answers at all, judged as the run goes: the verdict that stops a run in which nothing
/// has succeeded for `generator.unreachableAfter` while connections to the target fail.
///
/// Without it a run against a closed port or a wrong host name goes on for its whole duration measuring only
/// its own failures (ten users with no think time made 437,674 failed flows in 5 s), and a nightly job learns
/// that the target was down only from a report of nothing. A state machine without I/O: the collector feeds it
/// what finished in each interval and asks for the verdict, on whatever clock the run has.
///
/// The target counts as unreachable when, for `limit` since the run's start or its last success, no request
/// step succeeded and most failures were connection failures (``Outcome/isConnectionFailure``): a server that
/// answers every request with 503 is reachable, and its run goes on to be judged by its thresholds.
public struct Reachability: Sendable, Equatable {
    /// How long without a success, nil for never.
    public let limit: Duration?
    private var lastSuccess: Duration = .zero
    private var connectionFailures: [Outcome: Int] = [:]
    private var otherFailures = 0

    public init(limit: Duration?) {
        self.limit = limit.flatMap { $0 > .zero ? $0 : nil }
    }

    /// Takes the request steps that finished by `elapsed` (into the run) since the last call.
    public mutating func observe(successes: Int, failures: [Outcome: Int], at elapsed: Duration) {
        if successes > 0 {
            lastSuccess = elapsed
            connectionFailures.removeAll()
            otherFailures = 0
        }
        for (outcome, count) in failures where outcome.kind != .cancelled {
            if outcome.isConnectionFailure {
                connectionFailures[outcome, default: 0] += count
            } else {
                otherFailures += count
            }
        }
    }

    /// The verdict at `elapsed` into the run: nil while the target may be reachable.
    public func verdict(at elapsed: Duration) -> UnreachableVerdict? {
        guard let limit, elapsed - lastSuccess >= limit else { return nil }
        guard let (cause, count) = connectionFailures.max(by: { ($0.value, $1.key.detail) < ($1.value, $0.key.detail) }),
            count > otherFailures
        else { return nil }
        return UnreachableVerdict(cause: cause.detail, attempts: count + otherFailures, span: elapsed - lastSuccess)
    }
}

/// Why a run stopped early: the target did not answer, and nothing succeeded for a while.
public struct UnreachableVerdict: Sendable, Equatable {
    /// The most frequent connection failure, as the error breakdown names it (`connection refused`).
    public var cause: String
    /// Failed request steps in the span.
    public var attempts: Int
    /// How long nothing succeeded.
    public var span: Duration

    public init(cause: String, attempts: Int, span: Duration) {
        self.cause = cause
        self.attempts = attempts
        self.span = span
    }

    /// The one line a person reads: `http://127.0.0.1:1: connection refused, 0 successes in 30 s`.
    public func line(target: String) -> String {
        "\(target): \(cause), 0 successes in \(Int(span.seconds.rounded(.down))) s"
    }
}
