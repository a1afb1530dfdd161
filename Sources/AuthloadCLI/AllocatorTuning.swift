import Foundation

/// glibc's per-thread cache sized for a simulation, which the process can only be given when it starts.
///
/// A simulated shard runs thousands of users on one thread, which frees many blocks of one size in a burst (a request's
/// reply, a finished turn's task) and takes as many back soon after. glibc's per-thread cache keeps 7 blocks of a size by
/// default; the rest go to its shared bins, and a task's next slab, at 1 KB a "large" request, sweeps those bins at
/// every turn. With 256 a size, a simulated day took about 2.5 % less CPU (3 virtual hours 4.5 %) at much the same peak
/// RSS (docs/development.md).
///
/// glibc reads its tunables (`GLIBC_TUNABLES`) only at process start, so the executable starts itself again with the
/// setting added, before anything runs. Only the `authload` executable does this (never the library: a test calling
/// ``Authload/main(_:console:)`` must not replace its own process), only for a simulation, and only when neither the user
/// chose the cache's size nor `AUTHLOAD_ALLOCATOR_TUNING=off` is set.
public enum AllocatorTuning {
    /// Blocks of each size the cache keeps per thread.
    static let cachedBlocksPerSize = 256
    static let tunablesVariable = "GLIBC_TUNABLES"
    static let cacheCountTunable = "glibc.malloc.tcache_count"
    static let optOutVariable = "AUTHLOAD_ALLOCATOR_TUNING"

    /// The `GLIBC_TUNABLES` a process given `arguments` should start with, or nil when it should go on as it is: not a
    /// simulation, tuned already (or by the user), or opted out.
    static func tunables(for arguments: [String], environment: [String: String]) -> String? {
        guard case .run(let options)? = try? Command.parse(arguments), options.simulate else { return nil }
        guard environment[optOutVariable]?.lowercased() != "off" else { return nil }
        let current = environment[tunablesVariable] ?? ""
        guard !current.contains(cacheCountTunable) else { return nil }
        let setting = "\(cacheCountTunable)=\(cachedBlocksPerSize)"
        return current.isEmpty ? setting : "\(current):\(setting)"
    }

    /// Starts this executable again with glibc's cache sized for a simulation when `arguments` (the command line, the
    /// program first) ask for one; returns when there is nothing to do, or when starting again failed (the run goes on
    /// with glibc's defaults).
    public static func restartIfSimulating(_ arguments: [String]) {
        #if os(Linux)
        guard let tunables = tunables(for: Array(arguments.dropFirst()), environment: ProcessInfo.processInfo.environment) else {
            return
        }
        setenv(tunablesVariable, tunables, 1)
        let argv = arguments.map { strdup($0) } + [nil]
        // By its own path: started as /proc/self/exe, the process would be named "exe" in `ps`, `top` and `pgrep`. That
        // link is the fallback when the file was removed or replaced since (a rebuild during the run's start).
        let current = "/proc/self/exe"
        if let path = try? FileManager.default.destinationOfSymbolicLink(atPath: current) { execv(path, argv) }
        execv(current, argv)
        // Only reached when exec failed: the process is unchanged but for the variable, which its children may inherit.
        for argument in argv { free(argument) }
        #endif
    }
}
