/// How authload ends, as the process exit status (DESIGN.md, "CLI").
public enum ExitCode: Int32, Sendable {
    case success = 0
    /// The run itself failed: the target was unreachable, the report could not be written.
    case runError = 1
    case thresholdFailed = 2
    case generatorOverloaded = 3
    /// Bad arguments or a bad profile.
    case usage = 64
    case interrupted = 130
}

/// A failure to report to the user: one line of text and the exit status it maps to.
public struct CLIError: Error, Equatable, CustomStringConvertible {
    public var message: String
    public var exitCode: ExitCode
    /// The command whose usage to point at, for usage errors.
    public var command: String?

    public init(_ message: String, exitCode: ExitCode, command: String? = nil) {
        self.message = message
        self.exitCode = exitCode
        self.command = command
    }

    public static func usage(_ message: String, command: String?) -> CLIError {
        CLIError(message, exitCode: .usage, command: command)
    }

    public var description: String { message }
}
