import AuthloadCore
import AuthloadReport
import Foundation

/// `authload merge DIR...`: one report of a sharded run from every shard's `result.json`, as one generator
/// running the whole profile would have written it, with the exit status that report implies.
struct MergeCommand {
    let options: Command.MergeOptions
    let console: Console

    func execute() throws(CLIError) -> ExitCode {
        let shards = try shardFiles()
        var merger = ShardMerger()
        // Reading a shard's result.json is most of a merge: as many are read at once as there are cores, and
        // added in the order given; memory holds those few, never every shard.
        let width = max(1, min(ProcessInfo.processInfo.activeProcessorCount, 4))
        for start in stride(from: 0, to: shards.count, by: width) {
            let batch = Array(shards[start..<min(start + width, shards.count)])
            let loaded = Locked([Result<RunResult, CLIError>?](repeating: nil, count: batch.count))
            DispatchQueue.concurrentPerform(iterations: batch.count) { position in
                let result = Result { () throws(CLIError) -> RunResult in
                    do { return try ReportWriter.load(resultJSON: batch[position].1) } catch {
                        throw CLIError("\(error)", exitCode: .usage)
                    }
                }
                loaded.withLock { $0[position] = result }
            }
            for (position, read) in loaded.withLock({ $0 }).enumerated() {
                let result = try read!.get()
                do { try merger.add(result, from: batch[position].0) } catch { throw CLIError(error.description, exitCode: .usage) }
            }
        }
        return try report(merger, shards: shards.count)
    }

    /// Writes the report of what `merger` holds, from `shards` shards, and says so: the exit status is the merged
    /// run's.
    func report(_ merger: ShardMerger, shards: Int) throws(CLIError) -> ExitCode {
        let merged: RunResult
        do { merged = try merger.merged(partial: options.partial) } catch { throw CLIError(error.description, exitCode: .usage) }
        let directory = options.output ?? RunCommand.defaultDirectory(for: merged.profileName + "-merged", at: Date())
        let files: ReportFiles
        do { files = try ReportWriter.write(merged, to: directory) } catch {
            throw CLIError("cannot write the merged report to \(directory): \(error)", exitCode: .runError)
        }
        if !options.quiet {
            console.line("merged \(shards) shards of \(merged.profileName)")
            console.summary(merged)
        }
        console.line("report: \(files.html)")
        return RunCommand.exitCode(for: merged, console: console)
    }

    /// Each shard's name (its directory, as given) and `result.json`: a report directory, a `result.json`, or a
    /// directory whose subdirectories are the shards' report directories (the volume a Kubernetes Job wrote).
    private func shardFiles() throws(CLIError) -> [(String, String)] {
        let fileManager = FileManager.default
        let output = options.output.map { URL(fileURLWithPath: $0).standardizedFileURL.path }
        var files: [(String, String)] = []
        for path in options.directories {
            var isDirectory: ObjCBool = false
            guard fileManager.fileExists(atPath: path, isDirectory: &isDirectory) else {
                throw CLIError("\(path): no such file or directory", exitCode: .usage)
            }
            guard isDirectory.boolValue else {
                files.append(((path as NSString).deletingLastPathComponent, path))
                continue
            }
            let own = (path as NSString).appendingPathComponent("result.json")
            if fileManager.fileExists(atPath: own) {
                files.append((path, own))
                continue
            }
            let children = ((try? fileManager.contentsOfDirectory(atPath: path)) ?? []).sorted().map {
                (path as NSString).appendingPathComponent($0)
            }
            let shards = children.filter {
                URL(fileURLWithPath: $0).standardizedFileURL.path != output
                    && fileManager.fileExists(atPath: ($0 as NSString).appendingPathComponent("result.json"))
            }
            guard !shards.isEmpty else {
                throw CLIError(
                    "\(path): holds no result.json, nor do its subdirectories (give the shards' report directories)", exitCode: .usage)
            }
            files += shards.map { ($0, ($0 as NSString).appendingPathComponent("result.json")) }
        }
        return files
    }
}
