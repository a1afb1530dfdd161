import AuthloadCore
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A child process started with `posix_spawn` and waited for with `waitpid` on a thread of its own.
///
/// Foundation's `Process` on Linux now and then never reports a child's end (its termination handler and
/// `waitUntilExit` both wait for the same notification): with four shards ending at one instant, the sharded-run
/// test hung on a child that had long exited. Waiting on the pid itself cannot miss it.
struct SpawnedProcess: Sendable {
    let pid: pid_t

    /// Starts `executable` with `arguments`, its standard output and error written to the files named (or
    /// discarded).
    init(_ executable: String, _ arguments: [String], stdout: String = "/dev/null", stderr: String = "/dev/null") throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, stdout, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, stderr, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid: pid_t = 0
        let status = posix_spawn(&pid, executable, &actions, nil, argv, environ)
        guard status == 0 else { throw SpawnError(message: "posix_spawn \(executable): \(String(cString: strerror(status)))") }
        self.pid = pid
    }

    /// The exit status once the child has ended (128 + the signal's number for a child a signal ended).
    func exitStatus() async -> Int32 {
        let pid = self.pid
        return await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                var status: Int32 = 0
                while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
                let signal = status & 0x7f
                continuation.resume(returning: signal == 0 ? (status >> 8) & 0xff : 128 + signal)
            }
        }
    }

    struct SpawnError: Error, CustomStringConvertible {
        var message: String
        var description: String { message }
    }
}
