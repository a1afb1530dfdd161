import Synchronization

/// Virtual time for a simulated run: it stands still while anything can run, and the simulation's executor
/// (`SimulationExecutor`) moves it to the next deadline once nothing can.
///
/// It lives in Core, beside the runner, so that the runner can be specialized for it (``Runner/run()``): generic, the
/// engine looked up metadata and compared instants through witness tables at every user's turn.
///
/// Sleeping tasks and timers (a staging service's paced WebSocket messages, a receive's timeout) wait in one
/// min-heap ordered by deadline and then by the order they were registered, so events due at the same instant
/// always come out in the same order: with every job on one thread, a run is a pure function of its seed.
///
/// An entry in the heap holds what it wakes (the sleeper's continuation or the timer's work) itself: a sleep costs
/// one heap entry and one small box its cancellation handler can reach, not a table entry besides. Cancelled
/// sleepers and timers stay in the heap until they surface, and are skipped then.
///
/// Unlike `ManualClock` (AuthloadTesting), nothing here watches for a quiet run: the driver knows, because
/// its job queue is empty.
public final class SimulationClock: TimerClock, Sendable {
    public typealias Instant = VirtualInstant

    /// A sleeping task's continuation, reachable from its cancellation handler on whatever thread cancels it.
    @usableFromInline
    final class Sleeper: @unchecked Sendable {
        // Unchecked Sendable: both fields are read and written only under the clock's lock.
        var continuation: UnsafeContinuation<Void, any Error>?
        var cancelled = false
        /// Whether it waits isolated to an actor (``wait(until:isolation:)`` with an isolation).
        let isolated: Bool

        @usableFromInline
        init(isolated: Bool) { self.isolated = isolated }
    }

    /// A timer from ``schedule(at:_:)``, the handle ``cancel(_:)`` takes.
    public final class Timer: @unchecked Sendable {
        // Unchecked Sendable: read and written only under the clock's lock; nil once run or cancelled.
        fileprivate var work: (@Sendable () -> Void)?

        fileprivate init(_ work: @escaping @Sendable () -> Void) { self.work = work }
    }

    /// What an entry wakes. The heap holds it unmanaged, with a retain of its own taken at the push and given back
    /// when the entry leaves the heap: an entry that holds references is copied with a retain and a release at
    /// every comparison of a sift, and that was most of the heap's cost (the `Due` entries of a simulation's profile).
    private enum Wake {
        case sleeper(Unmanaged<Sleeper>)
        case timer(Unmanaged<Timer>)

        /// Gives back the retain the heap took.
        func release() {
            switch self {
            case .sleeper(let sleeper): sleeper.release()
            case .timer(let timer): timer.release()
            }
        }
    }

    /// What a deadline does once it is taken off the heap, outside the lock.
    private enum Fire {
        case resume(UnsafeContinuation<Void, any Error>, isolated: Bool)
        case run(@Sendable () -> Void)
    }

    private struct Due: Comparable {
        var deadline: Instant
        var id: UInt64
        var wake: Wake

        static func < (a: Due, b: Due) -> Bool { a.deadline < b.deadline || (a.deadline == b.deadline && a.id < b.id) }
        static func == (a: Due, b: Due) -> Bool { a.deadline == b.deadline && a.id == b.id }

        /// Whether it still has something to wake: a sleeper not cancelled, a timer neither run nor cancelled.
        var isLive: Bool {
            switch wake {
            case .sleeper(let sleeper): sleeper._withUnsafeGuaranteedRef { $0.continuation != nil }
            case .timer(let timer): timer._withUnsafeGuaranteedRef { $0.work != nil }
            }
        }

        /// Takes what it wakes, so that a cancellation from now on finds nothing to do.
        func take() -> Fire? {
            switch wake {
            case .sleeper(let sleeper):
                return sleeper._withUnsafeGuaranteedRef { sleeper in
                    defer { sleeper.continuation = nil }
                    return sleeper.continuation.map { Fire.resume($0, isolated: sleeper.isolated) }
                }
            case .timer(let timer):
                return timer._withUnsafeGuaranteedRef { timer in
                    defer { timer.work = nil }
                    return timer.work.map(Fire.run)
                }
            }
        }
    }

    private struct State: ~Copyable {
        var now = Instant(offset: .zero)
        var nextID: UInt64 = 0
        var heap = MinHeap<Due>()
        /// Sleepers and timers in the heap, neither cancelled nor woken.
        var live = 0

        mutating func push(_ deadline: Instant, _ wake: Wake) {
            heap.push(Due(deadline: deadline, id: nextID, wake: wake))
            nextID += 1
            live += 1
        }

        mutating func pruneTop() {
            while let top = heap.top, !top.isLive {
                heap.pop()
                top.wake.release()
            }
        }

        deinit {
            for due in heap.elements { due.wake.release() }
        }
    }

    private let state = Locked(State())
    /// ``now`` for readers, outside the lock: flows, transports and services read the clock many times a request (a GCCS
    /// request about fourteen), and the lock and unlock around each read were 1.5–2.5 % of a simulation's CPU.
    private let published = PublishedInstant()

    public init() {}

    public var now: Instant { published.read() }
    public var minimumResolution: Duration { .zero }

    /// Sleepers and timers not yet due.
    public var pending: Int { state.withLock { $0.live } }

    /// The earliest deadline of a live sleeper or timer.
    public var nextDeadline: Instant? {
        state.withLock { state in
            state.pruneTop()
            return state.heap.top?.deadline
        }
    }

    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        try await wait(until: deadline, isolation: nil)
    }

    /// ``sleep(until:tolerance:)`` on the caller's isolation: an in-process request waiting for its reply from its
    /// user's actor stays on the actor, where a nonisolated sleep would hop off it and back (two more jobs).
    ///
    /// Inlined into its callers (the simulation's transport, a flow's pause): its own entry and return were two more
    /// executor checks, each taking the task's status lock, as a simulation's user tasks prefer its executor. So is the
    /// runtime's entry point without an isolation parameter, as `SingleConnectionClient.send` uses: the one taking
    /// `isolation` checked the executor on entry and on return, two more (docs/development.md).
    @inlinable @inline(__always)
    public func wait(until deadline: Instant, isolation: isolated (any Actor)? = #isolation) async throws {
        try Task.checkCancellation()
        let sleeper = Sleeper(isolated: isolation != nil)
        try await _unsafeInheritExecutor_withTaskCancellationHandler(
            operation: {
                try await withUnsafeThrowingContinuation(isolation: isolation) { (continuation: UnsafeContinuation<Void, any Error>) in
                    park(sleeper, until: deadline, continuation)
                }
            },
            onCancel: { cancel(sleeper) })
    }

    /// Puts `sleeper` in the heap until `deadline`, or resumes it at once when it is cancelled or the deadline has passed.
    @usableFromInline
    func park(_ sleeper: Sleeper, until deadline: Instant, _ continuation: UnsafeContinuation<Void, any Error>) {
        let resume: Result<Void, any Error>? = state.withLock { state in
            if sleeper.cancelled { return .failure(CancellationError()) }
            if deadline <= state.now { return .success(()) }
            sleeper.continuation = continuation
            state.push(deadline, .sleeper(Unmanaged.passRetained(sleeper)))
            return nil
        }
        if let resume { continuation.resume(with: resume) }
    }

    /// A sleeper's cancellation: it resumes with `CancellationError`, now if it sleeps, or when it parks.
    @usableFromInline
    func cancel(_ sleeper: Sleeper) {
        let continuation = state.withLock { state -> UnsafeContinuation<Void, any Error>? in
            sleeper.cancelled = true
            defer { sleeper.continuation = nil }
            if sleeper.continuation != nil { state.live -= 1 }
            return sleeper.continuation
        }
        continuation?.resume(throwing: CancellationError())
    }

    /// Runs `work` on the driver's thread once the clock reaches `deadline` (at once in the next advance when it
    /// has passed). Returns a handle for ``cancel(_:)``.
    @discardableResult
    public func schedule(at deadline: Instant, _ work: @escaping @Sendable () -> Void) -> Timer {
        let timer = Timer(work)
        state.withLock { state in state.push(max(deadline, state.now), .timer(Unmanaged.passRetained(timer))) }
        return timer
    }

    /// Calls off a timer from ``schedule(at:_:)`` that has not run yet.
    public func cancel(_ timer: Timer) {
        state.withLock { state in
            guard timer.work != nil else { return }
            timer.work = nil
            state.live -= 1
        }
    }

    /// Moves the clock to the earliest deadline and wakes everyone due then, in the order they were registered:
    /// sleepers are resumed (their jobs go to the executor's queue), timers run here. False when nobody waits.
    ///
    /// - Parameter resumeIsolated: resumes a sleeper that waits isolated to an actor, by calling the closure it is
    ///   handed. The simulation's executor marks the job that resume enqueues to run isolated, so that the task finds
    ///   itself on its actor's executor: a continuation always resumes its task off the actor, and the hop back to it
    ///   cost one more job for every request and every pause of a flow.
    @discardableResult
    public func advanceToNextDeadline(resumeIsolated: (() -> Void) -> Void = { $0() }) -> Bool {
        // The first due apart from the rest: deadlines rarely coincide, and an array for the one due cost every advance
        // an allocation (an empty array allocates nothing).
        let (first, rest) = state.withLock { state -> (Fire?, [Fire]) in
            state.pruneTop()
            guard let top = state.heap.top else { return (nil, []) }
            if top.deadline > state.now {
                state.now = top.deadline
                published.write(state.now)
            }
            var first: Fire?
            var rest: [Fire] = []
            while let top = state.heap.top, top.deadline <= state.now {
                state.heap.pop()
                let fire = top.take()
                top.wake.release()
                guard let fire else { continue }
                state.live -= 1
                if first == nil { first = fire } else { rest.append(fire) }
            }
            return (first, rest)
        }
        guard let first else { return false }
        func run(_ fire: Fire) {
            switch fire {
            case .resume(let continuation, isolated: false): continuation.resume()
            case .resume(let continuation, isolated: true): resumeIsolated { continuation.resume() }
            case .run(let work): work()
            }
        }
        run(first)
        for fire in rest { run(fire) }
        return true
    }
}

/// The clock's instant as two words under a sequence count (a seqlock), read without a lock: written only by the
/// clock's one writer, ``SimulationClock/advanceToNextDeadline(resumeIsolated:)``, under the clock's lock.
///
/// A reader takes the count, both words, then the count again, and reads again if a write was under way or came
/// between (an odd count, or two counts that differ). The fences are those of the usual seqlock (C++'s P1478 pattern):
/// the writer's releasing fence keeps the words from being written before the odd count, the reader's acquiring fence
/// keeps them from being read after its second count.
private final class PublishedInstant: Sendable {
    private let sequence = Atomic<UInt64>(0)
    private let low = Atomic<UInt64>(0)
    private let high = Atomic<Int64>(0)

    /// Only one thread writes at a time (the clock's lock is held).
    func write(_ instant: VirtualInstant) {
        let count = sequence.load(ordering: .relaxed)
        sequence.store(count &+ 1, ordering: .relaxed)
        atomicMemoryFence(ordering: .releasing)
        low.store(instant.low, ordering: .relaxed)
        high.store(instant.high, ordering: .relaxed)
        sequence.store(count &+ 2, ordering: .releasing)
    }

    func read() -> VirtualInstant {
        while true {
            let before = sequence.load(ordering: .acquiring)
            let low = low.load(ordering: .relaxed)
            let high = high.load(ordering: .relaxed)
            atomicMemoryFence(ordering: .acquiring)
            if before & 1 == 0, sequence.load(ordering: .relaxed) == before {
                return VirtualInstant(low: low, high: high)
            }
        }
    }
}
