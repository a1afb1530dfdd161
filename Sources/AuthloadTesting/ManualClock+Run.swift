import AuthloadCore

extension ManualClock {
    /// Runs `body` (typically `runner.run()`) to its end, moving the clock from deadline to deadline each
    /// time the run has gone quiet: every live task of the run parked on this clock.
    ///
    /// The run's ``RunControl`` counts its live tasks and reports each one that ends, so this works when the
    /// number of tasks varies (open-model users come and go), with no sleeps and no yield loops. Once the run
    /// has drained (its end reached, nothing in flight) the clock stays put: the run winds down without it, and
    /// its timekeeper's grace-period sleep, about to be called off, must not pass for a quiet task.
    ///
    /// ```swift
    /// let outcome = await clock.drive(runner.control) { await runner.run() }
    /// ```
    public func drive<T: Sendable>(_ control: RunControl, _ body: @escaping @Sendable () async -> T) async -> T {
        let finished = AsyncFlag()
        control.observeTaskEnds { [self] in recheck() }
        let task = Task {
            let value = await body()
            finished.set()
            self.recheck()
            return value
        }
        while true {
            await waitUntilQuiet { sleepers in
                finished.isSet || (!control.drained.isSet && control.liveTasks > 0 && sleepers == control.liveTasks)
            }
            if finished.isSet { break }
            guard advanceToNextDeadline() else { break }
        }
        return await task.value
    }
}

extension ManualClock {
    /// Returns once the run is quiet: it has live tasks and every one of them is parked on this clock.
    public func waitUntilQuiet(_ control: RunControl) async {
        control.observeTaskEnds { [self] in recheck() }
        await waitUntilQuiet { sleepers in control.liveTasks > 0 && sleepers == control.liveTasks }
    }

    /// Moves the clock from deadline to deadline up to `instant`, each time once the run has gone quiet.
    ///
    /// For a run whose number of sleepers varies, where ``run(until:sleepers:)`` needs a number known in advance:
    /// waiting users of the closed model are entries in a heap, not sleeping tasks.
    public func run(until instant: Instant, quiet control: RunControl) async {
        while now < instant {
            await waitUntilQuiet(control)
            guard let next = nextDeadline else { return }
            advance(to: min(next, instant))
        }
    }
}
