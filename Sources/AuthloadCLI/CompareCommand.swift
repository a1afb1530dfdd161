import AuthloadCore
import AuthloadReport
import Foundation

/// `authload compare BASE NEW`: a regression table of NEW against BASE; exit 2 beyond the tolerances.
struct CompareCommand {
    let options: Command.CompareOptions
    let console: Console

    func execute() throws(CLIError) -> ExitCode {
        var tolerances = CompareTolerances()
        if let path = options.profile { tolerances = try LoadedProfile.load(path).plan.compare }
        if let p50 = options.p50 { tolerances.p50 = p50 }
        if let p99 = options.p99 { tolerances.p99 = p99 }
        if let rate = options.errorRate { tolerances.errorRate = rate }
        if let delta = options.minLatencyDelta { tolerances.minLatencyDelta = delta }
        let base = try load(options.base)
        let new = try load(options.new)
        let baseSimulated = base.environment.simulated == true
        if baseSimulated != (new.environment.simulated == true), !options.allowSimulated {
            let (simulated, real) = baseSimulated ? (options.base, options.new) : (options.new, options.base)
            throw CLIError.usage(
                "\(simulated) is a simulation (virtual time, a model of the service) and \(real) a real run: their latencies "
                    + "are not comparable; pass --allow-simulated to compare them anyway",
                command: "compare")
        }
        let differences = PlanDifference.between(base: base, new: new)
        let loadDifferences = differences.filter(\.changesLoad)
        if !loadDifferences.isEmpty, !options.force {
            throw CLIError(
                "BASE and NEW ran different load (\(loadDifferences.map(\.description).joined(separator: "; "))): "
                    + "their latencies and errors differ for that alone; --force compares them anyway",
                exitCode: .usage, command: "compare")
        }
        if !differences.isEmpty {
            let forced = loadDifferences.isEmpty ? "" : " — compared anyway (--force): a regression below may be the load's doing"
            console.line("plans differ (base → new)\(forced):")
            for difference in differences { console.line("  " + difference.description) }
            console.line("")
        }
        let comparison = RunComparison(base: base, new: new, tolerances: tolerances)
        console.line(comparison.render())
        return comparison.regressed ? .thresholdFailed : .success
    }

    /// Reads a result.json, or the one in a report directory.
    private func load(_ path: String) throws(CLIError) -> RunResult {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw CLIError("\(path): no such file or directory", exitCode: .usage)
        }
        let json = isDirectory.boolValue ? (path as NSString).appendingPathComponent("result.json") : path
        do {
            return try ReportWriter.load(resultJSON: json)
        } catch {
            throw CLIError("\(error)", exitCode: .usage)
        }
    }
}
