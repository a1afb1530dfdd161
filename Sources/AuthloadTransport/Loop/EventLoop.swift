import AuthloadCore
import CSystem
import Foundation
import Synchronization

/// Something registered with an event loop that wants to hear about its file descriptor.
protocol EventHandler: AnyObject {
    /// Called on the loop's thread with the epoll event bits that fired.
    func handleEvents(_ events: UInt32)
}

/// One thread running epoll: socket readiness, timers, and work submitted from other threads.
///
/// Sockets, handlers and timers belong to exactly one loop and are touched only on its thread;
/// other threads reach them through ``execute(_:)``. That rule is what makes the `@unchecked Sendable`
/// below safe: the only state shared across threads is `submitted`, which is behind a lock, and the saturation
/// verdict, which is atomic.
///
/// A loop is also an executor (see `EventLoop+Executor.swift`): virtual users' tasks and actors run
/// their jobs between its I/O rounds, so a user's request and its response never cross threads.
public final class EventLoop: @unchecked Sendable {
    private let epollFD: Int32
    let wakeFD: Int32
    /// Registered handlers, indexed by descriptor. The kernel hands out the lowest free descriptor, so they stay
    /// dense: a bounds check per event where a dictionary hashed the descriptor on every event, registration and close.
    private var handlers: [(any EventHandler)?] = []
    private var timers = TimerQueue()
    /// The tasks paused on this loop's timers (``pause(until:_:)``), by a number of their own; loop-thread only. A
    /// loop that stops resumes them: its timers never fire again.
    private var pauses: [Int: UnsafeContinuation<Void, Never>] = [:]
    private var pausesStarted = 0
    private let submitted = Locked(Submitted())
    /// Work the loop's own thread submitted (a user's task resuming, a job its flow enqueued): no lock, no wake-up.
    /// Loop-thread only, as are the two batches below, which keep their capacity from round to round.
    private var submittedHere: [Work] = []
    /// Whether ``submit(_:)`` on the loop's thread may still use `submittedHere`: false once the loop tears down.
    private var takesWorkHere = true
    private var remoteBatch: [Work] = []
    private var localBatch: [Work] = []
    private var thread: Thread?
    /// Written once by the loop's thread before `init` returns, read-only afterwards.
    private var threadID: pthread_t?
    private var running = true
    /// Signalled once the loop's thread has torn everything down and is about to end.
    private let finished = DispatchSemaphore(value: 0)
    /// Runs the jobs of users still on this loop once it has stopped.
    let afterStop = DispatchQueue(label: "authload.loop.after-stop")
    /// When this round's `epoll_wait` returned; loop-thread only. The round's events are stamped with it and its
    /// timers compared against it: one clock reading per round instead of one per response. Every response a round
    /// reads answers a request written before that wait returned, so its stamp never precedes the request's start.
    private(set) var wokeAt = MonotonicInstant.now
    /// Whether the loop has been waiting for work at all lately; loop-thread only.
    private var saturation = LoopSaturation(start: .now)
    /// When the loop last found itself saturated, in monotonic nanoseconds; 0 once a window was not. Read by other threads.
    private let saturatedAt = Atomic<Int64>(0)
    /// Scratch space for reads; one per loop, since a loop reads one socket at a time.
    let readBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 16)

    private struct Submitted {
        var work: [Work] = []
        /// The loop will look at `work` before it next blocks: no need to write to the eventfd.
        var wakePending = false
        /// The loop has stopped: jobs go to `afterStop` instead (see `EventLoop+Executor.swift`).
        var stopped = false
    }

    /// Something to run on the loop's thread: a closure, a job of a task that prefers this loop, or a pause to start
    /// (see `EventLoop+Timer.swift`).
    enum Work {
        case closure(@Sendable () -> Void)
        case job(UnownedJob)
        case pause(until: MonotonicInstant, UnsafeContinuation<Void, Never>)
    }

    init(name: String) throws(TransportError) {
        let epoll: Int32
        do throws(IOError) {
            epoll = try Self.processed(syscall(blocking: false, where: "epoll_create1") { epoll_create1(Int32(EPOLL_CLOEXEC)) })
        } catch {
            throw TransportError(.systemCallFailed, "\(error)", systemCall: error.systemCall)
        }
        do throws(IOError) {
            let wake = try Self.processed(syscall(blocking: false, where: "eventfd") { eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC)) })
            epollFD = epoll
            wakeFD = wake
            try Self.control(epoll, EPOLL_CTL_ADD, wake, events: EPOLLIN.rawValue)
        } catch {
            SystemCalls.close(epoll)
            throw TransportError(.systemCallFailed, "\(error)", systemCall: error.systemCall)
        }
        let ready = DispatchSemaphore(value: 0)
        let finished = self.finished
        let thread = Thread { [unowned self] in
            Self.blockBrokenPipeSignal()
            self.threadID = pthread_self()
            ready.signal()
            self.runLoop()
            // Signalled once the loop's thread holds the loop no more: whoever waits may release it (and its eventfd).
            finished.signal()
        }
        thread.name = name
        thread.stackSize = 1 << 20
        self.thread = thread
        thread.start()
        ready.wait()
    }

    /// Closed here, not when the loop stops: ``submit(_:)`` decides to wake the loop under the lock but writes to the
    /// eventfd after it, so a submitter preempted in between may write once the loop has stopped. Closed at the stop,
    /// that write failed with EBADF (a crash, seen under load) or, with the number reused, wrote into another file.
    /// Every submitter holds the loop, so none can write once it is released.
    deinit {
        SystemCalls.close(wakeFD)
    }

    /// True on this loop's own thread: work for the loop can then run at once instead of through ``execute(_:)``.
    var inLoop: Bool { threadID.map { pthread_equal($0, pthread_self()) != 0 } ?? false }

    /// Runs `work` on the loop's thread, soon; callable from any thread.
    public func execute(_ work: @escaping @Sendable () -> Void) {
        submit(.closure(work))
    }

    /// Queues `work` for the loop's thread, waking it only when it may be blocked in `epoll_wait`.
    ///
    /// On the loop's own thread (every response resumes a user's task there) it takes neither the lock nor a
    /// wake-up: the loop looks at its own queue before it blocks.
    func submit(_ work: Work) {
        if inLoop && takesWorkHere {
            submittedHere.append(work)
            return
        }
        let (accepted, wake) = submitted.withLock { state -> (Bool, Bool) in
            guard !state.stopped else { return (false, false) }
            state.work.append(work)
            defer { state.wakePending = true }
            return (true, !state.wakePending)
        }
        guard accepted else {
            // A stopped loop runs nothing more; its closures are dropped, but a task must still finish.
            finishAfterStop(work)
            return
        }
        if wake {
            var one: UInt64 = 1
            // Would block only with the counter near 2^64: the loop has a wake-up pending anyway.
            do throws(IOError) {
                _ = try syscall(blocking: true, where: "write(eventfd)") { write(wakeFD, &one, 8) }
            } catch {
                preconditionFailure("the loop's eventfd: \(error)")
            }
        }
    }

    var hasStopped: Bool { submitted.withLock { $0.stopped } }

    /// Whether the loop has been busy for next to all of its last few windows (``LoopSaturation``); from any thread.
    ///
    /// A saturated loop wakes without pause and so renews its verdict every window; a verdict two windows old is from
    /// a loop that has since blocked, idle.
    var isSaturated: Bool {
        let at = saturatedAt.load(ordering: .relaxed)
        return at != 0 && MonotonicInstant.now.nanoseconds - at < 2 * LoopSaturation.window.nanoseconds
    }

    /// Stops the loop after the work already submitted; sockets still registered are closed.
    func shutdown() {
        execute { [self] in running = false }
    }

    /// Waits until the loop's thread has stopped and closed its sockets (at once on the loop's own thread).
    func waitUntilStopped() {
        guard !inLoop else { return }
        finished.wait()
        // For whoever waits next.
        finished.signal()
    }

    // MARK: Loop-thread only

    /// Adds `fd` to the epoll set for `events`, with `handler` to hear them.
    ///
    /// - Throws: when the kernel would not watch it (out of memory, or past `max_user_watches`): the caller fails
    ///   the connection rather than leave it waiting for events that will not come.
    func register(_ fd: Int32, events: UInt32, handler: any EventHandler) throws(IOError) {
        try Self.control(epollFD, EPOLL_CTL_ADD, fd, events: events)
        let index = Int(fd)
        if index >= handlers.count { handlers.append(contentsOf: repeatElement(nil, count: index + 1 - handlers.count)) }
        handlers[index] = handler
    }

    /// Reports a registered `fd`'s events to `handler` from now on; the handler before it is let go of.
    func handOver(_ fd: Int32, to handler: any EventHandler) {
        precondition(Int(fd) < handlers.count && handlers[Int(fd)] != nil, "descriptor \(fd) handed over while not registered")
        handlers[Int(fd)] = handler
    }

    /// Changes what epoll reports for a registered `fd`. `EPOLL_CTL_MOD` allocates nothing: it fails only for a
    /// descriptor that is not in the set or not open, which is a bug here, and stops the process.
    func modify(_ fd: Int32, events: UInt32) {
        do throws(IOError) {
            try Self.control(epollFD, EPOLL_CTL_MOD, fd, events: events)
        } catch {
            preconditionFailure("descriptor \(fd): \(error)")
        }
    }

    private static func control(_ epollFD: Int32, _ operation: Int32, _ fd: Int32, events: UInt32) throws(IOError) {
        var event = epoll_event()
        event.events = events
        event.data.fd = fd
        _ = try syscall(blocking: false, where: "epoll_ctl") { epoll_ctl(epollFD, operation, fd, &event) }
    }

    /// The value of a call made with `blocking: false`, which never comes back as would-block.
    private static func processed(_ result: IOResult<Int32>) -> Int32 {
        guard case .processed(let value) = result else { preconditionFailure("a call that cannot block would have") }
        return value
    }

    /// Forgets `fd` and closes it.
    ///
    /// Closing a descriptor takes it out of the epoll set (no descriptor here is ever duplicated), so there is
    /// no `EPOLL_CTL_DEL`: one system call fewer for every connection.
    func close(_ fd: Int32) {
        if Int(fd) < handlers.count { handlers[Int(fd)] = nil }
        SystemCalls.close(fd)
    }

    /// Calls `callback` on the loop at `deadline` unless cancelled first.
    func schedule(at deadline: MonotonicInstant, _ callback: @escaping () -> Void) -> TimerID {
        timers.schedule(at: deadline, callback)
    }

    func cancel(_ timer: TimerID) {
        timers.cancel(timer)
    }

    /// Resumes `continuation` at `deadline`, or when the loop stops if that comes first.
    func pause(until deadline: MonotonicInstant, _ continuation: UnsafeContinuation<Void, Never>) {
        let number = pausesStarted
        pausesStarted += 1
        pauses[number] = continuation
        _ = schedule(at: deadline) { [self] in pauses.removeValue(forKey: number)?.resume() }
    }

    private func runLoop() {
        let capacity = 256
        let events = UnsafeMutablePointer<epoll_event>.allocate(capacity: capacity)
        defer {
            takesWorkHere = false
            let leftover = submitted.withLock { state in
                state.stopped = true
                defer { state.work = [] }
                return state.work
            }
            for work in leftover + submittedHere { finishAfterStop(work) }
            submittedHere = []
            for continuation in pauses.values { continuation.resume() }
            pauses = [:]
            events.deallocate()
            for (fd, handler) in handlers.enumerated() where handler != nil { SystemCalls.close(Int32(fd)) }
            handlers.removeAll()
            SystemCalls.close(epollFD)
            // The eventfd stays open until deinit: a submitter that saw the loop running may not have written to it yet.
            readBuffer.deallocate()
        }
        while running {
            let timeout = hasSubmittedWork() ? 0 : nanosecondsUntilNextTimer()
            // Only a wait that may block is timed: a loop with work queued does not wait, and takes no clock reading.
            let waitFrom: MonotonicInstant? = timeout == 0 ? nil : .now
            // A signal's interruption waits again; any other failure is a loop that can no longer wait, and so no loop.
            let count: Int32
            do throws(IOError) {
                count = try Self.processed(
                    syscall(blocking: false, where: "epoll_wait") { authload_epoll_wait_ns(epollFD, events, Int32(capacity), timeout) })
            } catch {
                fatalError("\(error)")
            }
            wokeAt = .now
            if let saturated = saturation.woke(at: wokeAt, afterWaiting: waitFrom.map { wokeAt - $0 } ?? .zero) {
                saturatedAt.store(saturated ? wokeAt.nanoseconds : 0, ordering: .relaxed)
            }
            for i in 0..<max(0, Int(count)) {
                let event = events[i]
                let fd = event.data.fd
                if fd == wakeFD {
                    var value: UInt64 = 0
                    // Reported readable, so it holds a count; a would-block (another round took it) is as good.
                    do throws(IOError) {
                        _ = try syscall(blocking: true, where: "read(eventfd)") { read(wakeFD, &value, 8) }
                    } catch {
                        preconditionFailure("the loop's eventfd: \(error)")
                    }
                    continue
                }
                // Looked up first: a handler may register or close descriptors while it runs.
                let handler = Int(fd) < handlers.count ? handlers[Int(fd)] : nil
                handler?.handleEvents(event.events)
            }
            while let callback = timers.popDue(now: wokeAt) { callback() }
            runSubmitted()
        }
    }

    /// How long `epoll_wait` may block: until the next timer, -1 (forever) when none is set.
    ///
    /// A timer more than ``staleClockHorizon`` away is measured from ``wokeAt`` rather than a new reading, and so
    /// fires late by the round's work, microseconds against a wait of that length; a nearer one (the staging
    /// server's modelled latencies) gets a new reading.
    private func nanosecondsUntilNextTimer() -> Int64 {
        guard let next = timers.nextDeadline() else { return -1 }
        let from = next - wokeAt > Self.staleClockHorizon ? wokeAt : .now
        return max(0, next.nanoseconds - from.nanoseconds)
    }

    private static let staleClockHorizon = Duration.milliseconds(10)

    /// OpenSSL writes to its socket with write(2), which raises SIGPIPE when the peer has gone, and that
    /// kills the process. Blocked on the loop threads (where every socket write happens), the signal stays
    /// pending and the write fails with EPIPE instead, as `send(MSG_NOSIGNAL)` does for plain sockets.
    private static func blockBrokenPipeSignal() {
        var signals = sigset_t()
        sigemptyset(&signals)
        sigaddset(&signals, SIGPIPE)
        pthread_sigmask(SIG_BLOCK, &signals, nil)
    }

    /// Work queued while the loop ran (by itself, or by a thread that saw a wake-up already pending)
    /// means `epoll_wait` must not block. Otherwise clears `wakePending`, so the next submitter writes
    /// to the eventfd.
    private func hasSubmittedWork() -> Bool {
        guard submittedHere.isEmpty else { return true }
        return submitted.withLock { state in
            if state.work.isEmpty { state.wakePending = false }
            return !state.work.isEmpty
        }
    }

    /// Runs what was submitted before this call; what that submits runs after the next `epoll_wait`
    /// (which then does not block), so a task that keeps re-enqueueing itself cannot starve the sockets.
    private func runSubmitted() {
        submitted.withLock { state in
            swap(&state.work, &remoteBatch)
            state.wakePending = true
        }
        swap(&submittedHere, &localBatch)
        // Other threads' work first: it has waited since before this round's wait (a user the scheduler started is
        // due already, and its lag is the generator's health), the loop's own only since this round's events.
        for item in remoteBatch { run(item) }
        for item in localBatch { run(item) }
        // Emptied, not replaced: the next round appends into the same storage.
        remoteBatch.removeAll(keepingCapacity: true)
        localBatch.removeAll(keepingCapacity: true)
    }

    private func run(_ work: Work) {
        switch work {
        case .closure(let closure): closure()
        case .job(let job): run(job)
        case .pause(let deadline, let continuation): pause(until: deadline, continuation)
        }
    }

    /// What becomes of work the stopped loop will not run: a job still runs, so that its task can end; a pause
    /// ends at once; a closure is dropped.
    private func finishAfterStop(_ work: Work) {
        switch work {
        case .closure: break
        case .job(let job): runAfterStop(job)
        case .pause(_, let continuation): continuation.resume()
        }
    }
}
