import AuthloadCore
import AuthloadReport
import Foundation

/// Saves what a run has measured every `metrics.checkpoint` while it goes on: `result.json` rewritten
/// atomically with the cumulative figures, and only the intervals finished since the last checkpoint appended
/// to the time-series files, so a checkpoint costs the same at hour 10 as at minute 1. A run killed with
/// `kill -9` then still leaves a report: `authload report DIR` rebuilds the rest from the last checkpoint.
///
/// Rows saved are dropped from memory, so a soak's memory does not grow with its length; rows that could
/// not be saved stay in memory (compacted past two hours) and are retried at the next checkpoint.
///
/// Its interval is on the run's clock: virtual time in a simulation, where `endedAt` counts from `startedAt` too.
struct Checkpointer<C: Clock>: Sendable where C.Duration == Duration {
    let runner: Runner<C>
    let clock: C
    let plan: RunPlan
    let record: PlanRecord
    let directory: String
    let startedAt: Date
    let target: String
    let tlsVerificationOff: Bool
    let console: Console
    /// A simulation's checkpoints say so, as its final report does.
    var simulated = false
    /// Log each checkpoint (log mode: on a terminal the progress line says enough).
    let logs: Bool
    /// The first interval not yet in `timeseries.csv`, for the final report to append after.
    let written = Locked(0)

    /// Writes a checkpoint every interval until cancelled; a failed write is reported once and retried at the next.
    func run() async {
        var warned = false
        let clock = self.clock
        var next = clock.now.advanced(by: plan.checkpoint)
        while true {
            do {
                try await clock.sleep(until: next, tolerance: nil)
            } catch {
                return
            }
            next = next.advanced(by: plan.checkpoint)
            let firstNew = written.withLock { $0 }
            guard let outcome = runner.checkpoint(rowsFrom: firstNew) else { continue }
            var result = RunResultBuilder.build(
                plan: plan, record: record, outcome: outcome, startedAt: startedAt,
                endedAt: startedAt.addingTimeInterval(outcome.elapsed.seconds),
                target: target, tlsVerificationOff: tlsVerificationOff, simulated: simulated)
            result.status = .running
            do {
                let next = try ReportWriter.writeCheckpoint(result, to: directory, firstNewInterval: firstNew)
                written.withLock { $0 = next }
                // On disk now: the final report reads them back, so memory holds only the last few seconds.
                runner.collector.forgetRows(before: next)
                if logs { console.line("checkpoint: \(next) intervals saved to \(directory)") }
            } catch {
                if !warned {
                    console.err("warning: cannot save a checkpoint: \(error) (the run goes on; its final report is written at the end)\n")
                }
                warned = true
            }
        }
    }
}
