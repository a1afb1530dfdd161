import Foundation

/// How the tests start Python: in isolated mode (`-I`) and in a new empty directory of their own.
///
/// `python3 -m http.server` started in the system's temporary directory put that directory first on `sys.path`,
/// so a `types.py` or `http.py` anyone left in /tmp stood in for the standard library and failed the suite.
/// `-I` keeps the working directory (and the script's), `PYTHON*` variables and the user's site-packages off
/// `sys.path`; the directory of its own means nothing the test did not put there is beside it either.
enum IsolatedPython {
    /// `command` (`["/usr/bin/python3"]` or `["/usr/bin/env", "python3"]`) running `arguments` in isolated mode.
    static func process(_ command: [String], _ arguments: [String]) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: command[0])
        process.arguments = Array(command.dropFirst()) + ["-I"] + arguments
        process.currentDirectoryURL = URL(fileURLWithPath: try scratchDirectory("python"))
        return process
    }

    /// Runs `arguments` to the end: the exit status and what Python wrote to stdout and stderr.
    static func run(_ command: [String], _ arguments: [String]) -> (status: Int32, output: String) {
        let output = Pipe()
        let process: Process
        do {
            process = try self.process(command, arguments)
            process.standardOutput = output
            process.standardError = output
            try process.run()
        } catch {
            return (-1, "\(error)")
        }
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, text)
    }
}
