import AuthloadCore

/// A ``StompSession`` that a socket runs as it reads (``WebSocketConnection/consume(_:)``): it hands each frame to the
/// flow's `handle` until that returns a result, and sends heart-beats and gives up as the session says.
///
/// `@unchecked Sendable`: the task that makes it hands it to the socket and is suspended until the socket is done
/// with it; the socket calls it from one thread at a time, so its fields (and what `handle` touches) have one user at
/// a time, and resuming the task orders the socket's last call before the task reads ``session`` and ``result``.
final class StompFollower<C: Clock>: WebSocketMessageConsumer, @unchecked Sendable where C.Duration == Duration {
    private(set) var session: StompSession<C.Instant>
    /// The flow's result, or why the session could not go on; `.timeout` until one or the other.
    private(set) var result: Result<Outcome, StompClientError> = .failure(.timeout)
    private let clock: C
    private let deadline: C.Instant
    private let handle: (StompSession<C.Instant>.Received) -> Outcome?

    init(session: StompSession<C.Instant>, clock: C, deadline: C.Instant, handle: @escaping (StompSession<C.Instant>.Received) -> Outcome?)
    {
        self.session = session
        self.clock = clock
        self.deadline = deadline
        self.handle = handle
    }

    // The socket calls `next` through its protocol, where the clock is not known: a simulation's follower reads every
    // status message, so it goes to the step specialized for its clock. The check is made here rather than by
    // `@_specialize` on `step`, whose generic entry looked up the session's, its frame's and their optionals' metadata
    // (`swift_getGenericMetadata`) before it dispatched, at every status.
    func next(after received: ReceivedWebSocketMessage?) -> WebSocketConsumerStep {
        if C.self == SimulationClock.self {
            return unsafeDowncast(self as AnyObject, to: StompFollower<SimulationClock>.self).step(after: received)
        }
        return step(after: received)
    }

    @inline(never)
    private func step(after received: ReceivedWebSocketMessage?) -> WebSocketConsumerStep {
        do {
            if let received { try session.take(received, now: clock.now) }
            while let frame = try session.nextFrame() {
                if let outcome = handle(frame) {
                    result = .success(outcome)
                    return .finish
                }
            }
        } catch {
            result = .failure(error)
            return .finish
        }
        let now = clock.now
        // Asked of the timing alone: asked of the session, the class handed it over as a copy.
        switch session.liveness.nextWait(until: deadline, now: now) {
        case .sendHeartBeat:
            session.sent(at: now)
            return .send(.text("\n"))
        case .fail(let error):
            result = .failure(error)
            return .finish
        case .wait(let timeout):
            return .wait(timeout)
        }
    }
}
