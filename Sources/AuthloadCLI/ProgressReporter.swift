import AuthloadCore

/// Prints how the run is going: a line rewritten each second on a terminal, a log line every 5 s otherwise.
///
/// The line's pace is wall time either way. The run's own time is the runner's: in a simulation it is virtual, and
/// the line adds how fast it goes against wall time (`×60` is an hour a minute).
struct ProgressReporter<C: Clock>: Sendable where C.Duration == Duration {
    let console: Console
    let plan: RunPlan
    let runner: Runner<C>
    let simulated: Bool

    func start() -> Task<Void, Never> {
        let console = self.console
        let plan = self.plan
        let runner = self.runner
        let simulated = self.simulated
        return Task {
            let clock = ContinuousClock()
            let start = clock.now
            let period = console.isTerminal ? Duration.seconds(1) : .seconds(5)
            var tick = 1
            while !Task.isCancelled {
                do { try await clock.sleep(until: start + period * tick) } catch { return }
                tick += 1
                let live = runner.collector.live
                let wall = start.duration(to: clock.now)
                let line =
                    Self.time(run: simulated ? runner.elapsed ?? .zero : wall, of: plan.load.duration, wall: simulated ? wall : nil)
                    + " users \(runner.control.activeUsers)/\(plan.load.users)"
                    + (plan.load.model == .open ? "  dropped \(TerminalFormat.count(runner.health.droppedSoFar))" : "")
                    + "  req/s \(TerminalFormat.count(Int(live.requestsPerSecond.rounded())))"
                    + "  p95 \(TerminalFormat.millis(live.p95Micros)) ms"
                    + "  errors \(TerminalFormat.count(live.totalErrors)) (\(TerminalFormat.percent(live.totalErrors, of: live.totalAttempts)))"
                    + (runner.control.wasStopRequested ? "  stopping" : "")
                if console.isTerminal { console.status(line) } else { console.line(line) }
            }
        }
    }

    /// The line's opening: how far the run is, `[1h/24h]`, and with the wall time a simulation took for it, how much
    /// faster than real time it goes, ` (virtual, ×60)`.
    static func time(run: Duration, of planned: Duration, wall: Duration?) -> String {
        let ratio = wall.flatMap { $0 > .zero ? " (virtual, ×\(TerminalFormat.count(Int((run / $0).rounded()))))" : nil }
        return "[\(DurationText.format(.seconds(Int64(run.seconds))))/\(DurationText.format(planned))]" + (ratio ?? "")
    }
}
