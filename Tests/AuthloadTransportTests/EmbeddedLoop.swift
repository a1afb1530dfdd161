import AuthloadCore
import CSystem
import Testing

@testable import AuthloadTransport

/// A ``ConnectionLoop`` the test drives, modelled on NIO's `EmbeddedEventLoop`: no thread, no epoll, no clock.
///
/// It remembers what each descriptor is registered for and which were closed; the test reports readiness with
/// ``fire(_:on:sourceLocation:)`` (one round of the loop: the handler, then the timers due, then the work
/// ``execute(_:)`` queued) and moves time with ``advanceTime(by:)``, which runs each timer due on the way at
/// its own deadline. Together with a ``ScriptedStream`` a connection shell runs exactly as it does on an
/// ``EventLoop``, one step at a time. A step a real loop could not take (an event on a descriptor nobody
/// registered, or one it does not watch for; a descriptor registered or closed twice) is recorded as an issue.
///
/// One thread only: ``execute(_:)`` queues, it does not hop.
final class EmbeddedLoop: ConnectionLoop {
    /// An arbitrary origin: connections never assume one.
    static let origin = MonotonicInstant(nanoseconds: 1_000_000_000_000)

    private(set) var now: MonotonicInstant
    private(set) var wokeAt: MonotonicInstant
    let readBuffer: UnsafeMutableRawBufferPointer
    let inLoop = true
    private var timers = TimerQueue()
    private var handlers: [Int32: any EventHandler] = [:]
    /// What each registered descriptor is watched for (epoll's interest).
    private(set) var interest: [Int32: UInt32] = [:]
    /// Descriptors closed, in the order they were.
    private(set) var closed: [Int32] = []
    private var queued: [@Sendable () -> Void] = []

    /// - Parameter readBufferSize: the read scratch buffer: a small one makes a single readiness event take
    ///   several reads, each a piece of what arrived.
    init(readBufferSize: Int = 64 * 1024) {
        now = Self.origin
        wokeAt = Self.origin
        readBuffer = .allocate(byteCount: readBufferSize, alignment: 16)
    }

    deinit { readBuffer.deallocate() }

    /// `seconds` after ``origin``.
    static func at(_ seconds: Double) -> MonotonicInstant { origin + .nanoseconds(Int64(seconds * 1e9)) }

    // MARK: ConnectionLoop

    func register(_ fd: Int32, events: UInt32, handler: any EventHandler) {
        if handlers[fd] != nil { Issue.record("descriptor \(fd) registered twice") }
        handlers[fd] = handler
        interest[fd] = events
    }

    func handOver(_ fd: Int32, to handler: any EventHandler) {
        if handlers[fd] == nil { Issue.record("descriptor \(fd) handed over while not registered") }
        handlers[fd] = handler
    }

    func modify(_ fd: Int32, events: UInt32) {
        guard handlers[fd] != nil else {
            Issue.record("descriptor \(fd) modified while not registered")
            return
        }
        interest[fd] = events
    }

    func close(_ fd: Int32) {
        if closed.contains(fd) { Issue.record("descriptor \(fd) closed twice") }
        handlers[fd] = nil
        interest[fd] = nil
        closed.append(fd)
    }

    func schedule(at deadline: MonotonicInstant, _ callback: @escaping () -> Void) -> TimerID {
        timers.schedule(at: deadline, callback)
    }

    func cancel(_ timer: TimerID) { timers.cancel(timer) }

    func execute(_ work: @escaping @Sendable () -> Void) { queued.append(work) }

    // MARK: Driving

    /// When the next live timer is due; nil when none is set.
    var nextTimer: MonotonicInstant? { timers.nextDeadline() }

    func isClosed(_ fd: Int32) -> Bool { closed.contains(fd) }

    /// One round of the loop in which epoll reported `events` for `fd`: its handler hears them (masked, as epoll
    /// would, to what the descriptor is watched for, plus errors and hang-ups), then the timers due now run, then
    /// the work queued by ``execute(_:)``.
    func fire(_ events: UInt32, on fd: Int32, sourceLocation: SourceLocation = #_sourceLocation) {
        wokeAt = now
        guard let handler = handlers[fd], let watched = interest[fd] else {
            Issue.record("no handler registered for descriptor \(fd)", sourceLocation: sourceLocation)
            return
        }
        let reported = events & (watched | EPOLLERR.rawValue | EPOLLHUP.rawValue)
        guard reported != 0 else {
            Issue.record("descriptor \(fd) is watched for \(watched), not \(events)", sourceLocation: sourceLocation)
            return
        }
        handler.handleEvents(reported)
        runDue()
    }

    /// The socket has input (or its peer's end of stream) to read.
    func fireReadable(_ fd: Int32, sourceLocation: SourceLocation = #_sourceLocation) {
        fire(EPOLLIN.rawValue, on: fd, sourceLocation: sourceLocation)
    }

    /// The socket takes output again (or a connect finished).
    func fireWritable(_ fd: Int32, sourceLocation: SourceLocation = #_sourceLocation) {
        fire(EPOLLOUT.rawValue, on: fd, sourceLocation: sourceLocation)
    }

    /// Moves the clock on by `duration`, running every timer due by then at its own deadline, in deadline order,
    /// as a loop that woke for it would; a timer that a callback sets within the span runs too.
    func advanceTime(by duration: Duration) { advanceTime(to: now + duration) }

    func advanceTime(to instant: MonotonicInstant) {
        while let next = timers.nextDeadline(), next <= instant {
            now = max(now, next)
            wokeAt = now
            runDue()
        }
        now = max(now, instant)
    }

    /// Runs the work ``execute(_:)`` queued, and what that queues in turn.
    func runQueued() {
        while !queued.isEmpty {
            let batch = queued
            queued = []
            for work in batch { work() }
        }
    }

    private func runDue() {
        while let callback = timers.popDue(now: wokeAt) { callback() }
        runQueued()
    }
}
