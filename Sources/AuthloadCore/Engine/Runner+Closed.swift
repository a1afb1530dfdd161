/// The closed model: a population of users, each looping flow → think → flow while the schedule wants it.
///
/// Without stages, user n starts at (n+1)/users of the ramp-up and runs to the end. With stages, user n is
/// active while the schedule's level is at least n + 1: it starts when a ramp reaches it, finishes its
/// current flow and leaves when a ramp goes below it, and comes back when the level rises again.
///
/// A user that waits, to start or between flows, is an entry in ``WaitingUsers`` rather than a sleeping task:
/// the run's task takes users off as they fall due and starts a task for each, which runs the user's flow and
/// puts it back. A user with no think time goes straight on to its next flow in the same task. A flow that hands a
/// long wait to the engine (``FlowHold``) ends its turn's task; a new one goes on with the turn when the wait ends.
extension Runner {
    func runUsers(start: C.Instant, end: C.Instant) async -> Int {
        let population = Population(
            waiting: WaitingUsers<C.Instant>(control: control), tasks: userTasks(), start: start, end: end)
        let waiting = population.waiting
        // A shard runs its own users by their global numbers, on the profile's own schedule.
        let owned = (0..<plan.load.users).filter { plan.shard?.owns($0) ?? true }
        for index in owned {
            guard let due = firstArrival(index, after: start, runStart: start), due < end else { continue }
            _ = waiting.push(.init(due: due, index: index, user: nil, active: false))
        }
        let tasks = population.tasks
        // The scheduler (this task) counts as live before the timekeeper can park, or a driver could see a quiet run
        // whose users have not been scheduled and move the clock past them; schedule() ends the count.
        control.taskStarted()
        await withTaskCancellationHandler {
            await withTaskGroup(of: Void.self) { group in
                // The timekeeper's live-task count is held by run() until the run has wound down.
                group.addTask {
                    if await !self.keepTime(end: end) { tasks.cancelAll() }
                }
                let everyoneLeft = await schedule(population, owned: owned.count)
                // Whoever still waits ends here, without another flow.
                for entry in waiting.close() where entry.active {
                    if let user = entry.user { await leave(user) }
                    control.userFinished()
                }
                // Every user left before the end (a staged schedule that went to zero): nothing to wait for.
                if everyoneLeft { group.cancelAll() }
                await tasks.waitUntilNoneRun()
            }
        } onCancel: {
            tasks.cancelAll()
        }
        return population.iterations.withLock { $0 }
    }

    /// Starts each waiting user's turn as it falls due, until the end, a stop request, or every user has left.
    ///
    /// This is the run's task: it counts as live while it schedules, parked on the clock between wakes, and ends
    /// the live count ``runUsers(start:end:)`` took for it when it stops.
    ///
    /// - Returns: whether every user left before the end.
    private func schedule(_ population: Population<C.Instant>, owned: Int) async -> Bool {
        defer { control.taskEnded() }
        let (waiting, end) = (population.waiting, population.end)
        // On a clock with timers the scheduler sleeps on its wake flag alone, which a timer sets at the deadline and a
        // stop request sets too, rather than on a race of three tasks each time (docs/development.md).
        let alarm = DeadlineAlarm(clock)
        if alarm != nil { control.stopRequested.whenSet { waiting.wake(sleepingOn: nil) } }
        while true {
            let now = clock.now
            guard now < end, !control.wasStopRequested, !Task.isCancelled else { return false }
            while let entry = waiting.popDue(now: now) {
                control.taskStarted()
                // On a socket transport the user's task and actor run on the event loop that carries its requests.
                let executor = transport.executor(forUser: entry.index)
                population.tasks.start(entry.index, executorPreference: executor) {
                    let turn = await self.resume(entry, population, executor: executor)
                    self.turnEnded(turn, population)
                }
            }
            if owned > 0 && waiting.isEmpty { return true }
            let (target, early) = waiting.nextWake(limit: end)
            if let alarm {
                // A stop requested since the check above found no flag to set: this one is not slept on.
                if !control.wasStopRequested {
                    let armed = alarm.set(at: target) { waiting.wake(sleepingOn: early) }
                    await early.wait()
                    alarm.cancel(armed)
                }
            } else {
                let clock = self.clock
                let control = self.control
                await race(
                    { try? await clock.sleep(until: target, tolerance: nil) },
                    { await control.stopRequested.wait() },
                    { await early.wait() })
            }
            waiting.woke(early)
        }
    }

    /// When user `index` next starts a life after `instant`: its point on the ramp, or the next time a stage's
    /// level reaches its number; nil when that never happens.
    private func firstArrival(_ index: Int, after instant: C.Instant, runStart: C.Instant) -> C.Instant? {
        guard !plan.load.stages.isEmpty else {
            // User n starts at (n+1)/users of the ramp: after each k-th of it, exactly k·users/steps are active.
            return runStart.advanced(by: (plan.load.rampUp * (index + 1)) / plan.load.users)
        }
        let level = Double(index + 1)
        return plan.load.schedule.firstOffset(whereLevelReaches: level, from: runStart.duration(to: instant)).map(runStart.advanced(by:))
    }

    /// A waiting user's turn: it starts its life or ends its think time, then runs flows until it waits again.
    ///
    /// Inlined into the turn's task: an async call level costs two executor checks, each under the task's status lock
    /// when the task prefers an executor (a simulation's user tasks do).
    @inline(__always)
    private func resume(
        _ entry: WaitingUsers<C.Instant>.Entry, _ population: Population<C.Instant>, executor: (any SerialExecutor & TaskExecutor)?
    ) async -> TurnEnd {
        let runStart = population.start
        health.woke(lag: entry.due.duration(to: clock.now), due: runStart.duration(to: entry.due), shard: entry.index)
        if entry.active, let user = entry.user {
            return await live(user, population, arrived: nil)
        }
        guard clock.now < population.end, control.userStarted() else { return TurnEnd(flows: 0) }
        let user =
            entry.user
            ?? VirtualUser(index: entry.index, identity: plan.users.identity(for: entry.index), seed: plan.seed, executor: executor)
        return await live(user, population, arrived: entry.due)
    }

    /// Counts the flows a turn's task ran, and ends the turn unless its flow is held (the task that goes on with it
    /// ends it).
    private func turnEnded(_ turn: TurnEnd, _ population: Population<C.Instant>) {
        population.iterations.withLock { $0 += turn.flows }
        guard !turn.held else { return }
        population.waiting.taskEnded()
        control.taskEnded()
    }

    /// The user's life, run on the user's actor (one hop per turn, not one per step): flows, and between them
    /// think time, until the user waits in `waiting` again, or leaves (the end, or a stage below its number).
    ///
    /// - Parameters:
    ///   - arrived: when a life that starts with this turn was due; nil for a user back from thinking.
    ///   - now: the clock's reading the caller has just taken (a held flow's end), if it has.
    private func live(_ user: isolated VirtualUser, _ population: Population<C.Instant>, arrived: C.Instant?, now: C.Instant? = nil)
        async -> TurnEnd
    {
        let staged = !plan.load.stages.isEmpty
        var iterations = 0
        // One reading of the clock a turn: it decides whether the run goes on and is the flow's start.
        var now = now ?? clock.now
        turns: while now < population.end, !Task.isCancelled {
            if staged, let flows = leaveBelowLevel(user, population, iterations: iterations, arrived: arrived, now: now) {
                return TurnEnd(flows: flows)
            }
            guard control.beginFlow() else { break }
            let turn = beginTurn(pickFlow(&user.random), user: user, runStart: population.start, now: now, due: nil)
            let outcome: Outcome
            switch await flows[turn.flowIndex].start(turn.context, user: user) {
            case .ended(let ended):
                outcome = ended
            case .held(let hold):
                self.hold(hold, turn: turn, user: user, population)
                return TurnEnd(flows: iterations, held: true)
            }
            let finished = endTurn(turn, outcome: outcome, user: user)
            control.endFlow()
            iterations += 1
            switch afterFlow(user, waiting: population.waiting, finished: finished, end: population.end) {
            case .next:
                now = finished
            case .waits:
                return TurnEnd(flows: iterations)
            case .leaves:
                break turns
            }
        }
        control.userFinished()
        leave(user)
        return TurnEnd(flows: iterations)
    }

    /// Holds a flow's wait with no task: the user's turn goes on in a new task once it ends (``goOn(_:turn:user:_:)``),
    /// and the run's cancelling of its tasks cancels the wait.
    private func hold(_ hold: any FlowHold, turn: FlowTurn<C>, user: isolated VirtualUser, _ population: Population<C.Instant>) {
        let tasks = population.tasks
        let index = user.index
        let number = tasks.hold(index, hold)
        let executor = transport.executor(forUser: index)
        hold.start {
            tasks.resume(number, key: index, executorPreference: executor) {
                let turn = await self.goOn(hold, turn: turn, user: user, population)
                self.turnEnded(turn, population)
            }
        }
    }

    /// The rest of a turn whose flow was held: the flow from where its wait ended, then the user's life as ``live``
    /// goes on after a flow.
    private func goOn(_ hold: any FlowHold, turn: FlowTurn<C>, user: isolated VirtualUser, _ population: Population<C.Instant>)
        async -> TurnEnd
    {
        let outcome: Outcome
        switch await hold.resume(user: user) {
        case .ended(let ended):
            outcome = ended
        case .held(let next):
            self.hold(next, turn: turn, user: user, population)
            return TurnEnd(flows: 0, held: true)
        }
        let finished = endTurn(turn, outcome: outcome, user: user)
        control.endFlow()
        switch afterFlow(user, waiting: population.waiting, finished: finished, end: population.end) {
        case .next:
            var rest = await live(user, population, arrived: nil, now: finished)
            rest.flows += 1
            return rest
        case .waits:
            return TurnEnd(flows: 1)
        case .leaves:
            control.userFinished()
            leave(user)
            return TurnEnd(flows: 1)
        }
    }

    // The decisions around a user's flows are synchronous functions of their own: inlined, their temporaries took room
    // in `live`'s async frame, whose memory the user's task keeps for as long as it runs a flow (a GCCS user: a minute).

    /// Ends the user's life when the staged schedule's level is below its number, and puts it back in `waiting` for
    /// when the level reaches it again.
    ///
    /// - Returns: nil when the user stays; when it left, the flows its turn ran (`iterations`).
    @inline(never)
    private func leaveBelowLevel(
        _ user: isolated VirtualUser, _ population: Population<C.Instant>, iterations: Int, arrived: C.Instant?, now: C.Instant
    ) -> Int? {
        let (runStart, end) = (population.start, population.end)
        guard plan.load.schedule.level(at: runStart.duration(to: now)) < Double(user.index + 1) - 1e-9 else { return nil }
        control.userFinished()
        leave(user)
        // A level that sits exactly on this user's number at a segment's end brings it straight back: never spin on it.
        if iterations == 0, arrived == now { return 0 }
        if let due = firstArrival(user.index, after: now, runStart: runStart), due < end {
            _ = population.waiting.push(.init(due: due, index: user.index, user: user, active: false))
        }
        return iterations
    }

    /// What a user does after a flow that ended at `finished`.
    private enum AfterFlow {
        /// Straight on to its next flow (no think time).
        case next
        /// It thinks, waiting in `waiting`; the turn is over.
        case waits
        /// Its life ends (the run's end).
        case leaves
    }

    @inline(never)
    private func afterFlow(_ user: isolated VirtualUser, waiting: WaitingUsers<C.Instant>, finished: C.Instant, end: C.Instant) -> AfterFlow
    {
        // A user whose flows find no server waits longer each time, or it would spin on the failure.
        var think = user.random.duration(in: plan.load.thinkTime)
        if user.connectionFailures > 0 { think += ConnectionBackoff.delay(afterFailures: user.connectionFailures, using: &user.random) }
        // No think time: go straight on (a benchmark's tight loop) rather than through the heap, from the
        // instant the flow ended, which was read just now: another reading would cost every flow a clock call.
        guard think > .zero else { return .next }
        // A flow that ran past the end leaves nothing to wake for.
        guard finished < end else { return .leaves }
        // Waits until the end at most: still counted active, as a user thinking until then would be.
        return waiting.push(.init(due: min(finished.advanced(by: think), end), index: user.index, user: user, active: true))
            ? .waits : .leaves
    }
}

/// What every turn of a closed-model run shares: who waits, the tasks that run turns, the count of flows run, and the
/// run's start and end.
final class Population<Instant: InstantProtocol>: Sendable {
    let waiting: WaitingUsers<Instant>
    let tasks: UserTasks
    let iterations = Locked(0)
    let start: Instant
    let end: Instant

    init(waiting: WaitingUsers<Instant>, tasks: UserTasks, start: Instant, end: Instant) {
        self.waiting = waiting
        self.tasks = tasks
        self.start = start
        self.end = end
    }
}

/// How a turn's task ended: the flows it ran, and whether its last flow is held (the turn goes on in another task).
struct TurnEnd {
    var flows: Int
    var held = false
}
