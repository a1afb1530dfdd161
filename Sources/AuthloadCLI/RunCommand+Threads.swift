import AuthloadCore
import AuthloadStaging
import Foundation

extension RunCommand {
    /// `simulate --threads N`: the simulation as N shards of the run (`--shard I/N`), each on a thread of its own
    /// against services of its own, then one report merged from them as `authload merge` does: from the results the
    /// shards wrote, as `authload merge` would read them back, without reading back each shard's `result.json`.
    ///
    /// Each shard is as deterministic as a whole simulation, and the merge adds them in shard order, so one seed and
    /// one N give byte-identical histograms and counts. A capacity model is refused: its workers serve every user of
    /// the run, and a shard per thread would give each shard workers of its own.
    func simulateOnThreads(_ threads: Int, profile: LoadedProfile, staging: StagingConfiguration) async throws(CLIError) -> ExitCode {
        guard staging.capacity == nil else {
            throw CLIError.usage(
                "--threads: the model's \"capacity\" is one set of workers for every user, and shards on threads would each have their own; simulate it on one thread",
                command: "run")
        }
        // One start for every shard: their rows line up, and the services' wall clocks agree.
        let startedAt = Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down))
        let directory = options.output ?? Self.defaultDirectory(for: profile.plan.name, at: startedAt)
        let shards = (0..<threads).map { (directory as NSString).appendingPathComponent("shard-\($0)") }
        if !options.quiet {
            console.line(
                "authload \(HelpText.version): \(profile.plan.name) simulated as \(threads) shards on \(threads) threads "
                    + "(users and arrivals n with n mod \(threads) = I in shard I), merged into one report")
        }
        let wallStart = ContinuousClock.now
        let board = SimulationShards()
        let progress =
            options.quiet
            ? nil
            : ProgressReporter(console: console, plan: profile.plan, simulated: true) { ProgressFigures(combining: board.figures) }.start()
        let results = await withTaskGroup(of: ShardEnd.self) { group in
            for (index, shardDirectory) in shards.enumerated() {
                var shardOptions = options
                shardOptions.threads = nil
                shardOptions.shard = Shard(index: index, count: threads)!
                shardOptions.output = shardDirectory
                shardOptions.quiet = true
                let command = RunCommand(options: shardOptions, console: console, simulationStart: startedAt, shards: board)
                group.addTask { await ShardEnd(index: index, running: command) }
            }
            var errors = [CLIError?](repeating: nil, count: threads)
            for await end in group { errors[end.index] = end.error }
            return errors
        }
        progress?.cancel()
        if let error = results.lazy.compactMap({ $0 }).first { throw error }
        if !options.quiet {
            let wall = wallStart.duration(to: ContinuousClock.now).seconds
            console.line("simulated on \(threads) threads in \(String(format: "%.1f", wall)) s, no socket opened to a target")
        }
        var merge = Command.MergeOptions()
        merge.output = directory
        merge.quiet = options.quiet
        var merger = ShardMerger()
        for (index, result) in board.takeResults() {
            do { try merger.add(result, from: shards[index]) } catch { throw CLIError(error.description, exitCode: .runError) }
        }
        return try MergeCommand(options: merge, console: console).report(merger, shards: threads)
    }
}

/// How one shard of a simulation on threads ended: its report written, or the error that stopped it.
private struct ShardEnd: Sendable {
    let index: Int
    let error: CLIError?

    init(index: Int, running command: RunCommand) async {
        self.index = index
        do {
            _ = try await command.execute()
            error = nil
        } catch {
            self.error = error
        }
    }
}

/// The shards of a simulation on threads: their progress, as each shows it once its runner exists, and their
/// results, as each leaves the one its report holds.
final class SimulationShards: Sendable {
    private let state = Locked(State())

    private struct State {
        var progress: [Int: @Sendable () -> ProgressFigures] = [:]
        var results: [Int: RunResult] = [:]
    }

    /// Shows shard `index`'s progress by `figures` from now on.
    func show(_ index: Int, by figures: @escaping @Sendable () -> ProgressFigures) {
        state.withLock { $0.progress[index] = figures }
    }

    /// The figures of the shards shown so far, in shard order.
    var figures: [ProgressFigures] {
        state.withLock { $0.progress }.sorted { $0.key < $1.key }.map { $0.value() }
    }

    /// Shard `index` ended with `result`, as its report holds it.
    func finished(_ index: Int, _ result: RunResult) {
        state.withLock { $0.results[index] = result }
    }

    /// The shards' results in shard order, which the board then lets go.
    func takeResults() -> [(index: Int, result: RunResult)] {
        state.withLock { state in
            defer { state.results = [:] }
            return state.results.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        }
    }
}
