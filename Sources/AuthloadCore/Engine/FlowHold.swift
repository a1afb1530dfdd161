/// How far ``Flow/start(_:user:)`` got: to the flow's end, or to a wait it hands to the engine.
public enum FlowProgress: Sendable {
    case ended(Outcome)
    /// The flow waits for something that calls back when it is done (a status stream the socket's loop follows); the
    /// engine holds it with no task waiting, and goes on with ``FlowHold/resume(user:)`` in a new task once it ends.
    case held(any FlowHold)
}

/// A wait inside a flow that no task awaits: what a flow whose users wait long (a GCCS status stream, about a minute)
/// hands to the engine instead of suspending its user's task on it.
///
/// A Swift task keeps the memory of the deepest chain of async frames it ever reached until it ends, in 1,000-byte
/// slabs: a user's task suspended under the engine's turn and the flow's steps held five of them (about 4.7 KB) for the
/// whole wait. A held flow keeps only its own objects; the task that goes on with it is new, and ends at the flow's
/// end or its next hold.
///
/// The engine calls ``start(then:)`` once, then ``resume(user:)`` once `done` was called; ``cancel()`` may come at any
/// time, from any thread (the run cancelling its users' tasks when its grace period runs out), before or after start.
public protocol FlowHold: AnyObject, Sendable {
    /// Starts the wait; `done` is called exactly once, on any thread, when it ends, by itself or by ``cancel()``.
    func start(then done: @escaping @Sendable () -> Void)

    /// Ends the wait early, as cancelling a task ends a wait on it: the flow goes on as it would after a
    /// `CancellationError` there. Before ``start(then:)``, the start ends at once; after the end, nothing happens.
    func cancel()

    /// Goes on with the flow once the wait ended, on its user's actor: up to the flow's end or its next hold.
    func resume(user: isolated VirtualUser) async -> FlowProgress
}
