/// The closed model's users that are not running a flow: waiting to start (the ramp, or a stage that has not
/// reached them yet) or thinking between flows. A waiting user is an entry in a heap, not a task: it costs its
/// actor and a few words, where a task asleep on the clock kept a kilobyte or more of frames and slabs.
///
/// One scheduler task takes entries off when they fall due and starts a task for each; that task runs the user's
/// flow and puts the user back (``push(_:)``) for its next wake, or lets it leave. The scheduler sleeps until the
/// earliest entry, and a push that comes before that instant (or the last user leaving) wakes it early.
final class WaitingUsers<Instant: InstantProtocol>: Sendable {
    struct Entry: Comparable, Sendable {
        var due: Instant
        var index: Int
        /// The user's actor once it has lived; a staged user that left keeps it for its next life.
        var user: VirtualUser?
        /// Whether the user is counted active while it waits (thinking), or starts a life when due.
        var active: Bool

        static func < (a: Entry, b: Entry) -> Bool { a.due < b.due || (a.due == b.due && a.index < b.index) }
        static func == (a: Entry, b: Entry) -> Bool { a.due == b.due && a.index == b.index }
    }

    /// An entry as the heap holds it: its user unmanaged, retained from the push until it leaves the heap. An entry
    /// holding a reference was retained and released at every comparison of every sift.
    private struct Held: Comparable {
        var due: Instant
        var index: Int
        var user: Unmanaged<VirtualUser>?
        var active: Bool

        init(_ entry: Entry) {
            (due, index, active) = (entry.due, entry.index, entry.active)
            user = entry.user.map { Unmanaged.passRetained($0) }
        }

        /// The entry, its user's retain handed to it.
        func taken() -> Entry {
            Entry(due: due, index: index, user: user?.takeRetainedValue(), active: active)
        }

        static func < (a: Held, b: Held) -> Bool { a.due < b.due || (a.due == b.due && a.index < b.index) }
        static func == (a: Held, b: Held) -> Bool { a.due == b.due && a.index == b.index }
    }

    private struct State: ~Copyable {
        var heap = MinHeap<Held>()
        /// Users started by the scheduler and not yet back in the heap or gone.
        var running = 0
        var closed = false
        /// What the scheduler sleeps until, and the flag that wakes it sooner.
        var target: Instant?
        var wake: AsyncFlag?

        /// Takes the scheduler's wake flag when it has to wake now: for an entry due before its target, or
        /// because nobody waits or runs any more.
        mutating func takeWake(dueBefore due: Instant?) -> AsyncFlag? {
            let early = due.map { due in target.map { due < $0 } ?? false } ?? (heap.isEmpty && running == 0)
            guard early, let flag = wake else { return nil }
            wake = nil
            target = nil
            return flag
        }

        deinit {
            for held in heap.elements { held.user?.release() }
        }
    }

    private let state = Locked(State())
    private let control: RunControl

    /// - Parameter control: counts a wake the scheduler has yet to take as a live task of the run, so a virtual-time
    ///   driver does not see the run as quiet, and move the clock, between a push and the scheduler's next sleep.
    init(control: RunControl) {
        self.control = control
    }

    private func wake(_ flag: AsyncFlag?) {
        guard let flag else { return }
        control.taskStarted()
        flag.set()
    }

    /// Wakes the scheduler now if it sleeps on `flag` (on whatever it sleeps on, when nil): for the timer of its
    /// sleep's deadline, which must not wake a later sleep, and for a stop request.
    func wake(sleepingOn flag: AsyncFlag?) {
        let taken = state.withLock { state -> AsyncFlag? in
            guard let current = state.wake, flag.map({ $0 === current }) ?? true else { return nil }
            state.wake = nil
            state.target = nil
            return current
        }
        wake(taken)
    }

    /// The scheduler's side of ``wake(_:)``: its sleep is over, and it was woken early if `early` is set.
    func woke(_ early: AsyncFlag) {
        if early.isSet { control.taskEnded() }
    }

    /// Puts a user in to wait, before the scheduler starts or from a task that is done with the user for now.
    ///
    /// - Returns: false once the scheduler has closed the heap: the caller lets the user go itself.
    func push(_ entry: Entry) -> Bool {
        let (accepted, flag) = state.withLock { state -> (Bool, AsyncFlag?) in
            guard !state.closed else { return (false, nil) }
            state.heap.push(Held(entry))
            return (true, state.takeWake(dueBefore: entry.due))
        }
        wake(flag)
        return accepted
    }

    /// The next entry due by `now`, counted as running; nil when none is.
    func popDue(now: Instant) -> Entry? {
        state.withLock { state in
            guard let top = state.heap.top, top.due <= now else { return nil }
            state.running += 1
            return state.heap.pop()?.taken()
        }
    }

    /// A task started by the scheduler ends (its user back in the heap, or gone).
    func taskEnded() {
        let flag = state.withLock { state in
            state.running -= 1
            return state.takeWake(dueBefore: nil)
        }
        wake(flag)
    }

    /// Whether every user has gone: nobody waits and nobody runs.
    var isEmpty: Bool { state.withLock { $0.heap.isEmpty && $0.running == 0 } }

    /// What the scheduler sleeps until (the earliest entry, or `limit`), with the flag that cuts the sleep short.
    func nextWake(limit: Instant) -> (target: Instant, early: AsyncFlag) {
        state.withLock { state in
            let target = min(state.heap.top?.due ?? limit, limit)
            let flag = AsyncFlag()
            state.target = target
            state.wake = flag
            return (target, flag)
        }
    }

    /// Closes the heap for good and returns whoever still waits in it.
    func close() -> [Entry] {
        state.withLock { state in
            state.closed = true
            var left: [Entry] = []
            left.reserveCapacity(state.heap.count)
            while let held = state.heap.pop() { left.append(held.taken()) }
            return left
        }
    }
}
