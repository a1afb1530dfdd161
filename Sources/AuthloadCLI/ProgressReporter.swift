import AuthloadCore

/// Prints how the run is going: a line rewritten each second on a terminal, a log line every 5 s otherwise.
struct ProgressReporter {
    let console: Console
    let plan: RunPlan
    let runner: Runner<ContinuousClock>

    func start() -> Task<Void, Never> {
        let console = self.console
        let plan = self.plan
        let runner = self.runner
        return Task {
            let clock = ContinuousClock()
            let start = clock.now
            let period = console.isTerminal ? Duration.seconds(1) : .seconds(5)
            var tick = 1
            while !Task.isCancelled {
                do { try await clock.sleep(until: start + period * tick) } catch { return }
                tick += 1
                let live = runner.collector.live
                let line =
                    "[\(DurationText.format(.seconds(Int64(start.duration(to: clock.now).seconds))))/\(DurationText.format(plan.load.duration))]"
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
}
