import AuthloadCore

/// Prints how the run is going: a line rewritten each second on a terminal, a log line every 5 s otherwise.
///
/// The line's pace is wall time either way. The run's own time is the runner's: in a simulation it is virtual, and
/// the line adds how fast it goes against wall time (`×60` is an hour a minute).
struct ProgressReporter: Sendable {
    let console: Console
    let plan: RunPlan
    let simulated: Bool
    /// What the line shows, read once a line.
    let figures: @Sendable () -> ProgressFigures

    init(console: Console, plan: RunPlan, simulated: Bool, figures: @escaping @Sendable () -> ProgressFigures) {
        self.console = console
        self.plan = plan
        self.simulated = simulated
        self.figures = figures
    }

    /// The progress of one runner.
    init<C: Clock>(console: Console, plan: RunPlan, runner: Runner<C>, simulated: Bool) where C.Duration == Duration {
        self.init(console: console, plan: plan, simulated: simulated) { ProgressFigures(runner) }
    }

    func start() -> Task<Void, Never> {
        let reporter = self
        return Task {
            let clock = ContinuousClock()
            let start = clock.now
            let period = reporter.console.isTerminal ? Duration.seconds(1) : .seconds(5)
            var tick = 1
            while !Task.isCancelled {
                do { try await clock.sleep(until: start + period * tick) } catch { return }
                tick += 1
                let line = reporter.line(reporter.figures(), wall: start.duration(to: clock.now))
                if reporter.console.isTerminal { reporter.console.status(line) } else { reporter.console.line(line) }
            }
        }
    }

    /// The line for `figures`, `wall` into the run.
    func line(_ figures: ProgressFigures, wall: Duration) -> String {
        Self.time(run: simulated ? figures.elapsed : wall, of: plan.load.duration, wall: simulated ? wall : nil)
            + " users \(figures.activeUsers)/\(plan.load.users)"
            + (plan.load.model == .open ? "  dropped \(TerminalFormat.count(figures.dropped))" : "")
            + "  req/s \(TerminalFormat.count(Int(figures.requestsPerSecond.rounded())))"
            + "  p95 \(figures.p95IsBound ? "≤ " : "")\(TerminalFormat.millis(figures.p95Micros)) ms"
            + "  errors \(TerminalFormat.count(figures.errors)) (\(TerminalFormat.percent(figures.errors, of: figures.attempts)))"
            + (figures.stopping ? "  stopping" : "")
    }

    /// The line's opening: how far the run is, `[1h/24h]`, and with the wall time a simulation took for it, how much
    /// faster than real time it goes, ` (virtual, ×60)`.
    static func time(run: Duration, of planned: Duration, wall: Duration?) -> String {
        let ratio = wall.flatMap { $0 > .zero ? " (virtual, ×\(TerminalFormat.count(Int((run / $0).rounded()))))" : nil }
        return "[\(DurationText.format(.seconds(Int64(run.seconds))))/\(DurationText.format(planned))]" + (ratio ?? "")
    }
}

/// What a progress line shows, of one runner or of the shards of a simulation on threads together.
struct ProgressFigures: Sendable, Equatable {
    /// Time on the run's clock (virtual in a simulation); zero before it starts.
    var elapsed: Duration = .zero
    var activeUsers = 0
    /// Open-model arrivals dropped so far.
    var dropped = 0
    var requestsPerSecond = 0.0
    var p95Micros = 0
    /// The p95 is the slowest of several runners' own, so the whole run's is at most that.
    var p95IsBound = false
    var errors = 0
    var attempts = 0
    var stopping = false

    init() {}

    init<C: Clock>(_ runner: Runner<C>) where C.Duration == Duration {
        let live = runner.collector.live
        elapsed = runner.elapsed ?? .zero
        activeUsers = runner.control.activeUsers
        dropped = runner.health.droppedSoFar
        requestsPerSecond = live.requestsPerSecond
        p95Micros = live.p95Micros
        errors = live.totalErrors
        attempts = live.totalAttempts
        stopping = runner.control.wasStopRequested
    }

    /// The figures of shards that run side by side, as one run's: counts and rates add up; the time is the shard
    /// furthest behind, the one the run waits for; the p95 is bounded by the slowest shard's (the shards' intervals
    /// are not merged while they run).
    init(combining shards: [ProgressFigures]) {
        elapsed = shards.lazy.map(\.elapsed).min() ?? .zero
        for shard in shards {
            activeUsers += shard.activeUsers
            dropped += shard.dropped
            requestsPerSecond += shard.requestsPerSecond
            p95Micros = max(p95Micros, shard.p95Micros)
            errors += shard.errors
            attempts += shard.attempts
            stopping = stopping || shard.stopping
        }
        p95IsBound = shards.count > 1
    }
}
