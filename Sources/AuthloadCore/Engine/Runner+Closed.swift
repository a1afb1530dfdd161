/// The closed model: a population of users, each looping flow → think → flow while the schedule wants it.
///
/// Without stages, user n starts at (n+1)/users of the ramp-up and runs to the end. With stages, user n is
/// active while the schedule's level is at least n + 1: it starts when a ramp reaches it, finishes its
/// current flow and leaves when a ramp goes below it, and comes back when the level rises again.
extension Runner {
    private enum Child: Sendable {
        case user(iterations: Int)
        case timekeeper
    }

    func runUsers(start: C.Instant, end: C.Instant) async -> Int {
        await withTaskGroup(of: Child.self) { group in
            let users = plan.load.users
            let staged = !plan.load.stages.isEmpty
            // A shard runs its own users by their global numbers, on the profile's own schedule.
            let shard = plan.shard
            var owned = 0
            for index in 0..<users where shard?.owns(index) ?? true {
                owned += 1
                // User n starts at (n+1)/users of the ramp: after each k-th of it, exactly k·users/steps are active.
                let startAt = start.advanced(by: (plan.load.rampUp * (index + 1)) / users)
                control.taskStarted()
                // On a socket transport the user's task and actor run on the event loop that carries its requests.
                let executor = transport.executor(forUser: index)
                group.addTask(executorPreference: executor) {
                    defer { self.control.taskEnded() }
                    if staged { return .user(iterations: await self.runStagedUser(index, runStart: start, end: end, executor: executor)) }
                    return .user(iterations: await self.runUser(index, at: startAt, runStart: start, end: end, executor: executor))
                }
            }
            // The timekeeper's live-task count is held by run() until the run has wound down.
            group.addTask {
                await self.keepTime(end: end)
                return .timekeeper
            }
            var remaining = owned
            var iterations = 0
            while let child = await group.next() {
                switch child {
                case .user(let count):
                    iterations += count
                    remaining -= 1
                    if remaining == 0 { group.cancelAll() }
                case .timekeeper:
                    // Drained, out of grace, or told to cancel: whatever still runs is cancelled.
                    group.cancelAll()
                }
            }
            return iterations
        }
    }

    private func runUser(
        _ index: Int, at startAt: C.Instant, runStart: C.Instant, end: C.Instant,
        executor: (any SerialExecutor & TaskExecutor)?
    ) async -> Int {
        do {
            try await clock.sleep(until: startAt, tolerance: nil)
        } catch {
            return 0
        }
        health.woke(lag: startAt.duration(to: clock.now), due: runStart.duration(to: startAt), shard: index)
        guard clock.now < end, control.userStarted() else { return 0 }
        defer { control.userFinished() }
        let user = VirtualUser(index: index, identity: plan.users.identity(for: index), seed: plan.seed, executor: executor)
        return await loop(user, runStart: runStart, end: end, level: nil)
    }

    /// A user of a staged closed model: active whenever the schedule's level covers its number.
    private func runStagedUser(
        _ index: Int, runStart: C.Instant, end: C.Instant,
        executor: (any SerialExecutor & TaskExecutor)?
    ) async -> Int {
        let schedule = plan.load.schedule
        let level = Double(index + 1)
        var iterations = 0
        var user: VirtualUser?
        while !Task.isCancelled {
            guard let on = schedule.firstOffset(whereLevelReaches: level, from: runStart.duration(to: clock.now)) else { break }
            let due = runStart.advanced(by: on)
            guard due < end else { break }
            do {
                try await clock.sleep(until: due, tolerance: nil)
            } catch {
                break
            }
            health.woke(lag: due.duration(to: clock.now), due: on, shard: index)
            guard control.userStarted() else { break }
            let current = user ?? VirtualUser(index: index, identity: plan.users.identity(for: index), seed: plan.seed, executor: executor)
            user = current
            let done = await loop(current, runStart: runStart, end: end, level: level)
            control.userFinished()
            iterations += done
            // The level may sit exactly on this user's number at a segment's end; never spin on it.
            if done == 0 && clock.now == due { break }
        }
        return iterations
    }

    /// Runs one flow in a child task on the user's executor, so that the flow's async frames (a deep stack while it
    /// runs) are freed when it ends. A task keeps the memory its frames once took until the task itself ends, and a
    /// user thinking for 30 s between logins would hold all of it the whole time: 10,000 idle users took 222 MB with
    /// the flow inline, 160 MB apart. A child task per iteration costs a little CPU, so a user with no think time,
    /// which goes straight on to its next flow, runs its flows inline.
    private func iterateApart(_ flow: Int, user: isolated VirtualUser, runStart: C.Instant) async {
        let executor = transport.executor(forUser: user.index)
        await withTaskGroup(of: Void.self) { group in
            group.addTask(executorPreference: executor) { await self.iterate(flow, user: user, runStart: runStart) }
        }
    }

    /// The user's life, run on the user's actor: one hop per user, not one per step.
    ///
    /// - Parameter level: with stages, the level below which this user leaves (after its current flow).
    private func loop(_ user: isolated VirtualUser, runStart: C.Instant, end: C.Instant, level: Double?) async -> Int {
        let schedule = level == nil ? nil : plan.load.schedule
        var iterations = 0
        while clock.now < end, !Task.isCancelled {
            if let schedule, let level, schedule.level(at: runStart.duration(to: clock.now)) < level - 1e-9 { break }
            guard control.beginFlow() else { break }
            let flow = pickFlow(&user.random)
            if plan.load.thinkTime.max > .zero {
                await iterateApart(flow, user: user, runStart: runStart)
            } else {
                await iterate(flow, user: user, runStart: runStart)
            }
            control.endFlow()
            iterations += 1
            let think = user.random.duration(in: plan.load.thinkTime)
            // No think time: go straight on (a benchmark's tight loop) rather than through the clock.
            guard think > .zero else { continue }
            // A flow that ran past the end leaves nothing to wake for: waking "at the end" now would count
            // its overrun as schedule lag.
            let now = clock.now
            guard now < end else { break }
            let wake = min(now.advanced(by: think), end)
            do {
                try await clock.sleep(until: wake, tolerance: nil)
            } catch {
                break
            }
            health.woke(lag: wake.duration(to: clock.now), due: runStart.duration(to: wake), shard: user.index)
        }
        leave(user)
        return iterations
    }
}
