/// The shared lifecycle of one run: who is active, who is mid-flow, and whether to stop.
///
/// A run goes `running → draining → (cancelled)`. Draining starts at the planned end or on the first
/// stop request: no new flow starts, in-flight flows may finish until the grace deadline. A second stop
/// request (or the deadline) cancels whatever is left. The CLI's signal handler and the tests both
/// stop a run through ``requestStop()``; nothing here knows about signals.
public final class RunControl: Sendable {
    private enum Phase { case running, draining }

    private struct State {
        var phase = Phase.running
        var activeUsers = 0
        var inFlight = 0
        var stopRequests = 0
        var liveTasks = 0
        var observer: (@Sendable () -> Void)?
    }

    private let state = Locked(State())
    /// Set by the first stop request.
    public let stopRequested = AsyncFlag()
    /// Set by the second stop request.
    public let cancelRequested = AsyncFlag()
    /// Set once draining has begun and no flow is in flight.
    public let drained = AsyncFlag()

    public init() {}

    /// Asks the run to stop: the first call drains, the second cancels.
    public func requestStop() {
        let count = state.withLock { state in
            state.stopRequests += 1
            return state.stopRequests
        }
        if count == 1 { stopRequested.set() } else { cancelRequested.set() }
    }

    public var wasStopRequested: Bool { stopRequested.isSet }

    public var activeUsers: Int { state.withLock { $0.activeUsers } }

    /// The run's tasks still alive (users, generator, timekeeper, collector). Each parks on exactly one
    /// clock sleep when the run is quiet, which is how a virtual-time driver knows it may advance the clock.
    public var liveTasks: Int { state.withLock { $0.liveTasks } }

    /// Calls `observer` (outside any lock) whenever a task of the run ends; a virtual-time driver re-checks
    /// whether the run has gone quiet, since a task that ends parks nowhere.
    public func observeTaskEnds(_ observer: @escaping @Sendable () -> Void) {
        state.withLock { $0.observer = observer }
    }

    func taskStarted() {
        state.withLock { $0.liveTasks += 1 }
    }

    func taskEnded() {
        let observer = state.withLock { state in
            state.liveTasks -= 1
            return state.observer
        }
        observer?()
    }

    /// Counts an open-model arrival in as a user, and its visit as a live task, unless `limit` users are alive; not
    /// once draining. One lock for both: it is taken for every arrival.
    func admitUser(limit: Int) -> AdmitResult {
        state.withLock { state in
            guard state.phase == .running else { return .draining }
            guard state.activeUsers < limit else { return .atCap }
            state.activeUsers += 1
            state.liveTasks += 1
            return .admitted
        }
    }

    enum AdmitResult { case admitted, atCap, draining }
    public var inFlight: Int { state.withLock { $0.inFlight } }

    /// Counts a user in; false once the run is draining (the user should not start).
    func userStarted() -> Bool {
        state.withLock { state in
            guard state.phase == .running else { return false }
            state.activeUsers += 1
            return true
        }
    }

    func userFinished() {
        state.withLock { $0.activeUsers -= 1 }
    }

    /// Counts a flow in; false once the run is draining.
    func beginFlow() -> Bool {
        state.withLock { state in
            guard state.phase == .running else { return false }
            state.inFlight += 1
            return true
        }
    }

    func endFlow() {
        let idle = state.withLock { state in
            state.inFlight -= 1
            return state.phase == .draining && state.inFlight == 0
        }
        if idle { drained.set() }
    }

    func beginDraining() {
        let idle = state.withLock { state in
            state.phase = .draining
            return state.inFlight == 0
        }
        if idle { drained.set() }
    }
}
