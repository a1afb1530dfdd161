import AuthloadCore

/// A wait on an iteration's status stream that no task awaits: the socket's loop runs the ``StompFollower`` as it
/// reads, and the engine goes on with the iteration in a new task when the follower is done (``FlowHold``).
///
/// `@unchecked Sendable`: the iteration and the follower have one user at a time. The task that made the hold hands it
/// to the engine and ends; the socket's loop runs the follower and records `failure` before it calls `done`, and the
/// engine starts the task that calls ``resume(user:)`` after that, so the task reads what the loop wrote.
final class GCCSStatusHold<C: Clock>: FlowHold, @unchecked Sendable where C.Duration == Duration {
    private let iteration: GCCSIteration<C>
    private let wait: GCCSIteration<C>.StatusWait
    private let follower: StompFollower<C>
    private let socket: any WebSocketConnection
    private let consumption: any WebSocketConsumption
    /// What the socket's consumption threw, if it did.
    private var failure: (any Error)?

    /// Nil when the stream is not open or its socket has no loop of its own to follow it on: then the iteration waits
    /// on its task.
    init?(_ iteration: GCCSIteration<C>, wait: GCCSIteration<C>.StatusWait) {
        guard let (follower, socket) = iteration.follow(wait) else { return nil }
        guard let consumption = socket.consumption(of: follower) else {
            iteration.unfollow(follower, on: socket)
            return nil
        }
        self.iteration = iteration
        self.wait = wait
        self.follower = follower
        self.socket = socket
        self.consumption = consumption
    }

    func start(then done: @escaping @Sendable () -> Void) {
        consumption.start { [self] result in
            if case .failure(let error) = result { failure = error }
            done()
        }
    }

    /// As a cancelled task's wait on the socket ends: with `CancellationError`.
    func cancel() {
        consumption.stop(CancellationError())
    }

    // The engine calls `resume` through its protocol, where the clock is not known: a simulation's hold goes on in the
    // iteration specialized for its clock, as ``GCCSAuthFlow/start(_:user:)`` does. Checked here rather than by
    // `@_specialize` on `goOn`, whose generic entry looked up metadata (`swift_getGenericMetadata`) before it dispatched.
    func resume(user: isolated VirtualUser) async -> FlowProgress {
        if C.self == SimulationClock.self {
            return await unsafeDowncast(self as AnyObject, to: GCCSStatusHold<SimulationClock>.self).goOn(user: user)
        }
        return await goOn(user: user)
    }

    @inline(never)
    private func goOn(user: isolated VirtualUser) async -> FlowProgress {
        let outcome = iteration.followed(follower, on: socket, failure: failure, wait: wait)
        return await iteration.goOn(await iteration.after(wait, outcome))
    }
}
