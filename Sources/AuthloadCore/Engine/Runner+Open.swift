/// The open model: arrivals at the schedule's rate, each a new user who runs one weighted flow and leaves.
///
/// Arrival k is due at `start + offset(k)`, computed from the start (never by adding up intervals), and
/// its flow's time counts from that due instant: when the server stalls, or the generator starts the
/// user late, the wait shows in full (no coordinated omission). An arrival is dropped — counted, not
/// started — when `maxUsers` users are alive, when the generator gets to it more than `generator.dropAfter` late,
/// or when the thread that would carry it is saturated. Every arrival runs in a task of its own (``UserTasks``).
extension Runner {
    func runArrivals(start: C.Instant, end: C.Instant) async -> Int {
        let started = Locked(0)
        let tasks = UserTasks()
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
                // then starts each arrival's task where the task will run, with no lock and no other thread woken.
                let first = plan.shard?.index ?? 0
                let home = transport.executor(forUser: first)
                await withTaskExecutorPreference(home) {
                    await generate(
                        start: start, end: end, tasks: tasks, started: started, home: home, timer: transport.timer(forUser: first))
                }
                generated.set()
                await tasks.waitUntilNoneRun()
            }
        } onCancel: {
            tasks.cancelAll()
        }
        return started.withLock { $0 }
    }

    /// Starts each arrival in a task of its own as it falls due, until the end or a stop request.
    ///
    /// Ends the live count ``runArrivals(start:end:)`` took for the generator when it stops generating, not when
    /// its arrivals end.
    ///
    /// - Parameters:
    ///   - home: the executor the generator runs on (its task prefers it), nil for Swift's pool.
    ///   - timer: the timers of the thread the generator runs on, for its short pauses; nil to sleep on the clock.
    private func generate(
        start: C.Instant, end: C.Instant, tasks: UserTasks, started: Locked<Int>, home: (any SerialExecutor & TaskExecutor)?,
        timer: (any LoopTimer)?
    ) async {
        defer { control.taskEnded() }
        let schedule = plan.load.schedule
        let hook = hooks.beforeArrival
        // A shard takes arrivals index, index + count, …: each arrival of the schedule goes to one shard.
        let step = plan.shard?.count ?? 1
        let cap = plan.shard?.share(of: plan.load.users) ?? plan.load.users
        var number = plan.shard?.index ?? 0
        var woke = clock.now
        while let offset = schedule.arrivalOffset(number) {
            let due = start.advanced(by: offset)
            guard due < end else { return }
            if clock.now < due {
                // At most one wake per millisecond: at 20,000 arrivals a second a wake per arrival (a timer, a thread
                // hand-off) cost more than the flows. Arrivals due within the millisecond start together; each is timed
                // from its own due instant, so the wait counts in its latency and in the schedule lag.
                // The last batch wakes just before the end, when the run starts to drain and takes no more arrivals.
                let batchEnd = min(woke.advanced(by: Self.arrivalBatch), end.advanced(by: .microseconds(-1)))
                guard await pauseUnlessStopped(until: max(due, batchEnd), timer: timer) else { return }
                woke = clock.now
            }
            if let hook { await hook(number, offset) }
            // Due before the end, so started (or dropped) even when the generator gets to it just after: only a run
            // that has begun to drain starts no more.
            guard !Task.isCancelled, !control.wasStopRequested else { return }
            let lag = due.duration(to: clock.now)
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
                    let arrival = number
                    control.taskStarted()
                    // On a socket transport the visit runs on the event loop that carries its requests.
                    let executor = transport.executor(forUser: arrival)
                    if let executor, executor === home {
                        // The user's loop is the one this runs on: its task starts isolated to the user, and stays so.
                        let user = VirtualUser(
                            index: arrival, identity: plan.users.identity(for: arrival), seed: plan.seed, executor: executor)
                        tasks.start(arrival, on: user, preferring: executor) { user in
                            defer { self.control.taskEnded() }
                            if await self.visit(user, due: due, runStart: start) { started.withLock { $0 += 1 } }
                        }
                    } else {
                        tasks.start(arrival, executorPreference: executor) {
                            defer { self.control.taskEnded() }
                            if await self.visit(arrival, due: due, runStart: start, executor: executor) { started.withLock { $0 += 1 } }
                        }
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

    /// The generator's shortest sleep between arrivals (see ``generate(start:end:tasks:started:home:timer:)``).
    static var arrivalBatch: Duration { .milliseconds(1) }

    /// The longest pause the generator takes on its thread's timers, which a stop request does not cut short.
    static var shortPause: Duration { .milliseconds(20) }

    /// Pauses until `deadline` unless a stop request comes first; false when one did (or the task was cancelled).
    ///
    /// A short pause, the usual one at a high rate, goes to `timer` and is not cut short: a stop request waits for it
    /// at most ``shortPause``. Racing each pause against the stop request cost a task group and two child tasks on
    /// Swift's pool every millisecond, each waking a thread on the loop's core.
    private func pauseUnlessStopped(until deadline: C.Instant, timer: (any LoopTimer)?) async -> Bool {
        let delay = clock.now.duration(to: deadline)
        guard let timer, delay <= Self.shortPause else { return await sleepUnlessStopped(until: deadline) }
        if delay > .zero { await timer.pause(for: delay) }
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

    /// One arrival's life: a new user runs one flow, timed from its due instant, and leaves.
    ///
    /// - Returns: whether the flow started (not when the run began draining first).
    private func visit(_ number: Int, due: C.Instant, runStart: C.Instant, executor: (any SerialExecutor & TaskExecutor)?) async -> Bool {
        let user = VirtualUser(index: number, identity: plan.users.identity(for: number), seed: plan.seed, executor: executor)
        return await visit(user, due: due, runStart: runStart)
    }

    /// ``visit(_:due:runStart:executor:)`` for a user made already, on the user's actor.
    private func visit(_ user: isolated VirtualUser, due: C.Instant, runStart: C.Instant) async -> Bool {
        defer { control.userFinished() }
        health.started(lag: due.duration(to: clock.now), due: runStart.duration(to: due), shard: user.index)
        guard control.beginFlow() else { return false }
        defer { control.endFlow() }
        await iterate(pickFlow(&user.random), user: user, runStart: runStart, due: due)
        // An arrival's life is one flow.
        leave(user)
        return true
    }
}
