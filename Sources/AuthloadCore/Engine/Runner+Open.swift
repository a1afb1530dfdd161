/// The open model: arrivals at the schedule's rate, each a new user who runs one weighted flow and leaves.
///
/// Arrival k is due at `start + offset(k)`, computed from the start (never by adding up intervals), and
/// its flow's time counts from that due instant: when the server stalls, or the generator starts the
/// user late, the wait shows in full (no coordinated omission). An arrival is dropped — counted, not
/// started — when `maxUsers` users are alive, when the generator gets to it more than `generator.dropAfter` late,
/// or when the thread that would carry it is saturated. An admitted arrival goes to a worker, a long-lived task that
/// runs arrivals one after another (``ArrivalWorkers``); the workers are held by the run's ``UserTasks``. A visit's flow
/// starts as a closed-model turn's does (``Flow/start(_:user:)``): a wait it hands to the engine (``FlowHold``) is held
/// with no task under it, and its worker goes on to the next arrival with a new user.
extension Runner {
    func runArrivals(start: C.Instant, end: C.Instant) async -> Int {
        let started = Locked(0)
        let tasks = userTasks()
        let generated = AsyncFlag()
        // The generator (this task) counts as live before the timekeeper or any arrival can park, or a driver could
        // see a quiet run that has not started; generate() ends the count when it stops generating.
        control.taskStarted()
        await withTaskCancellationHandler {
            await withTaskGroup(of: Void.self) { group in
                // The timekeeper's live-task count is held by run() until the run has wound down.
                group.addTask {
                    if await !self.keepTime(end: end, generated: generated) { tasks.cancelAll() }
                }
                // The generator runs on the thread that carries its first arrival, and pauses on that thread's timers: it
                // then hands each arrival to a worker parked on that thread, with no other thread woken.
                let first = plan.shard?.index ?? 0
                let home = transport.executor(forUser: first)
                // A simulation's executor runs a job as what it was enqueued as: there the generator runs nonisolated.
                let isolation = transport.isolatesUserTasks ? nil : home.map { LoopIsolation($0) }
                await withTaskExecutorPreference(home) {
                    await generate(
                        start: start, end: end, tasks: tasks, started: started, generated: generated,
                        timer: transport.timer(forUser: first), isolation: isolation)
                }
                await tasks.waitUntilNoneRun()
            }
        } onCancel: {
            tasks.cancelAll()
        }
        return started.withLock { $0 }
    }

    /// Hands each arrival to a worker as it falls due, until the end or a stop request, then ends the workers as
    /// they finish.
    ///
    /// Ends the live count ``runArrivals(start:end:)`` took for the generator when it stops generating, not when
    /// its arrivals end, once it has set `generated`.
    ///
    /// - Parameters:
    ///   - timer: the timers of the thread the generator runs on, for its short pauses; nil to sleep on the clock.
    ///   - isolation: an actor on that thread's executor, nil where there is none. The loop runs every job isolated to
    ///     itself, so a nonisolated generator found itself on another executor at each call and return, and every one
    ///     (five a pause) went back through the loop's queue, a round of the loop each.
    private func generate(
        start: C.Instant, end: C.Instant, tasks: UserTasks, started: Locked<Int>, generated: AsyncFlag, timer: (any LoopTimer)?,
        isolation: isolated (any Actor)?
    ) async {
        // Set before the live count ends: a virtual-time driver that found the run quiet in between moved the clock past
        // the end to the timekeeper's slack, and the run reported an interval more.
        defer {
            generated.set()
            control.taskEnded()
        }
        // The workers of each executor the arrivals run on (one per event loop), made as the first arrival needs them.
        var pools: [ArrivalWorkers<Arrival>] = []
        var workerCount = 0
        // Generation has ended: a worker that finishes its visit from now on ends rather than park.
        defer { for workers in pools { workers.close() } }
        let schedule = plan.load.schedule
        let hook = hooks.beforeArrival
        // A shard takes arrivals index, index + count, …: each arrival of the schedule goes to one shard.
        let step = plan.shard?.count ?? 1
        let cap = plan.shard?.share(of: plan.load.users) ?? plan.load.users
        var number = plan.shard?.index ?? 0
        var woke = clock.now
        // One reading of the clock serves every arrival it finds due: a batch's twenty arrivals took forty readings.
        var now = woke
        while let offset = schedule.arrivalOffset(number) {
            let due = start.advanced(by: offset)
            guard due < end else { return }
            if now < due { now = clock.now }
            if now < due {
                // At most one wake per millisecond: at 20,000 arrivals a second a wake per arrival (a timer, a thread
                // hand-off) cost more than the flows. Arrivals due within the millisecond start together; each is timed
                // from its own due instant, so the wait counts in its latency and in the schedule lag.
                // The last batch wakes just before the end, when the run starts to drain and takes no more arrivals.
                let batchEnd = min(woke.advanced(by: Self.arrivalBatch), end.advanced(by: .microseconds(-1)))
                guard await pauseUnlessStopped(until: max(due, batchEnd), timer: timer) else { return }
                woke = clock.now
                now = woke
            }
            if let hook {
                await hook(number, offset)
                now = clock.now
            }
            // Due before the end, so started (or dropped) even when the generator gets to it just after: only a run
            // that has begun to drain starts no more.
            guard !Task.isCancelled, !control.wasStopRequested else { return }
            let lag = due.duration(to: now)
            if lag > plan.generator.dropAfter {
                health.dropped(lag: lag, due: offset, because: .late)
            } else if transport.isSaturated(forUser: number) {
                // A user started now would only queue behind the ones its thread cannot serve already (see
                // `Transport.isSaturated(forUser:)`): counted, and the run names the generator as its limit.
                health.dropped(lag: lag, due: offset, because: .saturated)
            } else {
                switch control.admitUser(limit: cap) {
                case .draining:
                    // The run reached its end while the generator was behind: what was due before it, from this
                    // arrival on, was never started, and is counted dropped (late) rather than lost.
                    if !control.wasStopRequested { dropRemaining(from: number, step: step, start: start, end: end) }
                    return
                case .atCap:
                    health.dropped(lag: lag, due: offset, because: .atCap)
                case .admitted:
                    // On a socket transport the visit runs on the event loop that carries its requests.
                    let executor = transport.executor(forUser: number)
                    let workers: ArrivalWorkers<Arrival>
                    if let found = pools.first(where: { $0.executor === executor }) {
                        workers = found
                    } else {
                        workers = ArrivalWorkers(executor: executor)
                        pools.append(workers)
                    }
                    // admitUser counted the visit as a live task; the worker ends the count once parked again.
                    let arrival = Arrival(number: number, due: due)
                    if !workers.hand(arrival) {
                        startWorker(arrival, workers: workers, key: workerCount, tasks: tasks, started: started, runStart: start)
                        workerCount += 1
                    }
                }
            }
            number += step
        }
    }

    /// Counts arrival `number` and every later one due before `end` as dropped late.
    private func dropRemaining(from number: Int, step: Int, start: C.Instant, end: C.Instant) {
        let schedule = plan.load.schedule
        var number = number
        while let offset = schedule.arrivalOffset(number), start.advanced(by: offset) < end {
            health.dropped(lag: start.advanced(by: offset).duration(to: clock.now), due: offset, because: .late)
            number += step
        }
    }

    /// The generator's shortest sleep between arrivals (see ``generate(start:end:tasks:started:generated:timer:isolation:)``).
    static var arrivalBatch: Duration { .milliseconds(1) }

    /// The longest pause the generator takes on its thread's timers, which a stop request does not cut short.
    static var shortPause: Duration { .milliseconds(20) }

    /// Pauses until `deadline` unless a stop request comes first; false when one did (or the task was cancelled).
    ///
    /// A short pause, the usual one at a high rate, goes to `timer` and is not cut short: a stop request waits for it
    /// at most ``shortPause``. Racing each pause against the stop request cost a task group and two child tasks on
    /// Swift's pool every millisecond, each waking a thread on the loop's core.
    private func pauseUnlessStopped(
        until deadline: C.Instant, timer: (any LoopTimer)?, isolation: isolated (any Actor)? = #isolation
    ) async -> Bool {
        let delay = clock.now.duration(to: deadline)
        guard let timer, delay <= Self.shortPause else { return await sleepUnlessStopped(until: deadline) }
        if delay > .zero { await timer.pause(for: delay, isolation: isolation) }
        return !Task.isCancelled && !control.wasStopRequested
    }

    /// Sleeps until `deadline` unless a stop request comes first; false when one did (or the task was cancelled).
    private func sleepUnlessStopped(until deadline: C.Instant) async -> Bool {
        if clock.now < deadline {
            let clock = self.clock
            let control = self.control
            await race({ try? await clock.sleep(until: deadline, tolerance: nil) }, { await control.stopRequested.wait() })
        }
        return !Task.isCancelled && !control.wasStopRequested
    }

    /// An admitted arrival, as the generator hands it to a worker.
    struct Arrival: Sendable {
        let number: Int
        let due: C.Instant
    }

    /// Starts a worker on `workers`' executor with `first` as its first arrival; it adds the flows it started to
    /// `started` when it ends.
    private func startWorker(
        _ first: Arrival, workers: ArrivalWorkers<Arrival>, key: Int, tasks: UserTasks, started: Locked<Int>, runStart: C.Instant
    ) {
        hooks.workerStarted?(first.number)
        // The task's first job runs nonisolated and then enters its user's isolation: one more enqueue, once per worker.
        tasks.start(key, executorPreference: workers.executor) {
            var next: Arrival? = first
            var count = 0
            // A user whose flow was held stays with its flow: the worker goes on with a new one.
            while let arrival = next {
                let user = VirtualUser(
                    index: arrival.number, identity: self.plan.users.identity(for: arrival.number), seed: self.plan.seed,
                    executor: workers.executor)
                next = await self.work(arrival, workers: workers, user: user, tasks: tasks, runStart: runStart, started: &count)
            }
            started.withLock { [count] in $0 += count }
        }
    }

    /// A worker's life on one user: it visits as each arrival handed to it, parked between them, until it is handed none
    /// or its user's flow is held (``FlowHold``).
    ///
    /// The worker runs isolated to one user actor on the arrivals' executor, visits and parks alike, and renews that
    /// user for each arrival (``VirtualUser/renew(index:users:seed:)``): the user is new in all but its memory. A new
    /// actor per arrival cost its allocation, and entering it and leaving it again cost two executor switches, each a
    /// look-up of the task's executor preference under its status lock.
    ///
    /// - Parameter started: counts the flows it started.
    /// - Returns: the arrival handed to the worker once its user's flow was held; nil when the worker should end.
    private func work(
        _ first: Arrival, workers: ArrivalWorkers<Arrival>, user: isolated VirtualUser, tasks: UserTasks, runStart: C.Instant,
        started: inout Int
    ) async -> Arrival? {
        var arrival = first
        while true {
            switch await visit(user, due: arrival.due, runStart: runStart, tasks: tasks) {
            case .notStarted:
                break
            case .ended:
                started += 1
            case .held:
                // The held flow keeps the user, and a live count of its own, which the task that goes on with it ends.
                started += 1
                return await workers.next(parked: control.taskEnded)
            }
            guard let next = await workers.next(parked: control.taskEnded) else { return nil }
            arrival = next
            user.renew(index: arrival.number, users: plan.users, seed: plan.seed)
        }
    }

    /// How a visit ended on its worker.
    private enum VisitEnd {
        /// The run was draining: no flow started.
        case notStarted
        case ended
        /// Its flow waits on a hold, and goes on in a task of its own (``goOn(_:turn:user:tasks:)``).
        case held
    }

    /// One arrival's life, on its user's actor: the user runs one flow, timed from its due instant, and leaves.
    ///
    /// The flow starts with ``Flow/start(_:user:)``, as a closed-model turn's does: a wait it hands to the engine (a GCCS
    /// status stream) is held with no task under it (``FlowHold``), and the worker goes on with other arrivals meanwhile.
    /// Inlined into the worker, which runs on the same actor: a call would check the task's executor again.
    @inline(__always)
    private func visit(_ user: isolated VirtualUser, due: C.Instant, runStart: C.Instant, tasks: UserTasks) async -> VisitEnd {
        health.started(lag: due.duration(to: clock.now), due: runStart.duration(to: due), shard: user.index)
        guard control.beginFlow() else {
            control.userFinished()
            return .notStarted
        }
        let turn = beginTurn(pickFlow(&user.random), user: user, runStart: runStart, now: nil, due: due)
        switch await flows[turn.flowIndex].start(turn.context, user: user) {
        case .ended(let outcome):
            endVisit(turn, outcome: outcome, user: user)
            return .ended
        case .held(let hold):
            self.hold(hold, turn: turn, user: user, tasks: tasks)
            return .held
        }
    }

    /// Records the visit's flow and ends the user's life (an arrival's life is one flow).
    @inline(never)
    private func endVisit(_ turn: FlowTurn<C>, outcome: Outcome, user: isolated VirtualUser) {
        _ = endTurn(turn, outcome: outcome, user: user)
        control.endFlow()
        leave(user)
        control.userFinished()
    }

    /// Holds a visit's wait with no task: the visit goes on in a new task once it ends, and the run's cancelling of its
    /// tasks cancels the wait.
    ///
    /// - Parameter counted: whether the hold has its live count already (a held flow held again); the first hold takes
    ///   one, so that the worker's ends only once the worker is parked, as after any visit.
    private func hold(_ hold: any FlowHold, turn: FlowTurn<C>, user: isolated VirtualUser, tasks: UserTasks, counted: Bool = false) {
        if !counted { control.taskStarted() }
        let index = user.index
        let number = tasks.hold(index, hold)
        let executor = transport.executor(forUser: index)
        hold.start {
            tasks.resume(number, key: index, executorPreference: executor) {
                await self.goOn(hold, turn: turn, user: user, tasks: tasks)
            }
        }
    }

    /// The rest of a visit whose flow was held: the flow from where its wait ended, then the user's leaving. Ends the
    /// hold's live count.
    private func goOn(_ hold: any FlowHold, turn: FlowTurn<C>, user: isolated VirtualUser, tasks: UserTasks) async {
        switch await hold.resume(user: user) {
        case .ended(let outcome):
            endVisit(turn, outcome: outcome, user: user)
            control.taskEnded()
        case .held(let next):
            self.hold(next, turn: turn, user: user, tasks: tasks, counted: true)
        }
    }
}
