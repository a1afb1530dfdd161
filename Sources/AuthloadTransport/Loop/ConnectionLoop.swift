/// What a connection shell needs from the loop it runs on: its socket's epoll interest, its timers, the time,
/// the scratch buffer its reads go into, and a way onto the loop's thread.
///
/// ``EventLoop`` is the one production loop. The shells (``ConnectionCore`` and the connections built on it:
/// ``HTTPClientConnection``, the server's `ServerConnection`, ``WebSocketFrameConnection``) hold their loop through
/// this protocol so their tests can run them on a loop the test drives (`EmbeddedLoop` in
/// `Tests/AuthloadTransportTests`), over a scripted ``ByteStream``: no socket, no thread, no sleep.
///
/// Every requirement is called on the loop's thread only, except ``inLoop`` and ``execute(_:)``.
protocol ConnectionLoop: AnyObject {
    /// Starts reporting `events` on `fd` to `handler`; throws when the kernel will not watch it.
    func register(_ fd: Int32, events: UInt32, handler: any EventHandler) throws(IOError)

    /// Reports a registered `fd`'s events to `handler` from now on (a socket handed over after an upgrade).
    func handOver(_ fd: Int32, to handler: any EventHandler)

    /// Changes what is reported on a registered `fd`.
    func modify(_ fd: Int32, events: UInt32)

    /// Forgets `fd` and closes it.
    func close(_ fd: Int32)

    /// Calls `callback` on the loop at `deadline` unless cancelled first.
    func schedule(at deadline: MonotonicInstant, _ callback: @escaping () -> Void) -> TimerID

    func cancel(_ timer: TimerID)

    /// When the loop's current round began: the stamp of every event it delivers in that round.
    var wokeAt: MonotonicInstant { get }

    /// The loop's clock read now (for a deadline measured from this moment, or a connection's marks).
    var now: MonotonicInstant { get }

    /// Scratch space for reads, shared by the loop's connections (one reads at a time).
    var readBuffer: UnsafeMutableRawBufferPointer { get }

    /// True on the loop's own thread.
    var inLoop: Bool { get }

    /// Runs `work` on the loop's thread, soon; callable from any thread.
    func execute(_ work: @escaping @Sendable () -> Void)
}

extension EventLoop: ConnectionLoop {
    var now: MonotonicInstant { .now }
}
