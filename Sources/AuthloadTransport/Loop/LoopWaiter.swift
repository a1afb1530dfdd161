/// A caller suspended on work that a loop finishes: resumed exactly once, by its result, its timer,
/// or the cancellation of its task, whichever comes first.
///
/// `@unchecked Sendable`: the waiter is created on the caller's task, but every field is read and
/// written only on `loop`'s thread afterwards (``EventLoop/suspend(_:onCancel:)`` hops there before
/// touching it), so the loop thread is its only user.
final class LoopWaiter<Value: Sendable>: @unchecked Sendable {
    let loop: EventLoop
    private var continuation: CheckedContinuation<Value, any Error>?
    /// The task was cancelled; set even before the continuation arrives, so a late start is refused.
    fileprivate(set) var cancelled = false
    /// A deadline timer, cancelled when the waiter resumes for another reason.
    var timer: TimerID?

    fileprivate init(loop: EventLoop) { self.loop = loop }

    /// Whether the caller is still waiting.
    var isPending: Bool { continuation != nil }

    fileprivate func attach(_ continuation: CheckedContinuation<Value, any Error>) {
        self.continuation = continuation
    }

    /// Resumes the caller unless it already was; later calls do nothing.
    func resume(_ result: Result<Value, any Error>) {
        guard let continuation else { return }
        self.continuation = nil
        if let timer {
            loop.cancel(timer)
            self.timer = nil
        }
        continuation.resume(with: result)
    }

    /// Resumes with `error` at `deadline` unless resumed before, then runs `then` (e.g. to forget the waiter).
    func expire(at deadline: MonotonicInstant, with error: @escaping @autoclosure () -> any Error, then: @escaping () -> Void = {}) {
        timer = loop.schedule(at: deadline) { [self] in
            timer = nil
            resume(.failure(error()))
            then()
        }
    }
}

extension EventLoop {
    /// Suspends the calling task until work started on this loop resumes the waiter it is given.
    ///
    /// Cancelling the task runs `onCancel` on the loop while the waiter is pending (by default it
    /// resumes with `CancellationError`); a task cancelled before `start` ran never starts it.
    func suspend<Value: Sendable>(
        _ start: @escaping @Sendable (LoopWaiter<Value>) -> Void,
        onCancel: @escaping @Sendable (LoopWaiter<Value>) -> Void = { $0.resume(.failure(CancellationError())) }
    ) async throws -> Value {
        let waiter = LoopWaiter<Value>(loop: self)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                execute {
                    waiter.attach(continuation)
                    if waiter.cancelled {
                        waiter.resume(.failure(CancellationError()))
                    } else {
                        start(waiter)
                    }
                }
            }
        } onCancel: {
            execute {
                waiter.cancelled = true
                if waiter.isPending { onCancel(waiter) }
            }
        }
    }
}
