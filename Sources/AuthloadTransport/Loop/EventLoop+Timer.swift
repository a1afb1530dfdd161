import AuthloadCore

/// A loop's timer queue as a pause for the tasks that run on the loop (see `EventLoop+Executor.swift`): the open-model
/// generator waits between batches of arrivals here, so its wake-up is an entry in the loop's timers, resumed between
/// two rounds of I/O, and no other thread wakes for it.
extension EventLoop: LoopTimer {
    public func pause(for delay: Duration, isolation: isolated (any Actor)?) async {
        let due = MonotonicInstant.now + delay
        // A loop that stops first ends the pause then: its timers never fire again.
        await withUnsafeContinuation(isolation: isolation) { (continuation: UnsafeContinuation<Void, Never>) in
            if inLoop { pause(until: due, continuation) } else { submit(.pause(until: due, continuation)) }
        }
    }
}
