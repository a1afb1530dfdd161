import AuthloadTransport

/// The `authload` command: parse, then validate, then run; every failure becomes a line and an exit code.
public enum Authload {
    public static func main(_ arguments: [String], console: Console = .standard) async -> ExitCode {
        OpenSSLProcess.start()
        do throws(CLIError) {
            switch try Command.parse(arguments) {
            case .help(let topic):
                guard let text = HelpText.text(for: topic) else {
                    throw CLIError.usage(
                        "no help for \"\(topic ?? "")\" (commands: run, simulate, validate, serve, report, compare, merge)", command: nil)
                }
                console.line(text)
                return .success
            case .version:
                console.line("authload \(HelpText.version)")
                return .success
            case .validate(let profile):
                return try ValidateCommand(profile: profile, console: console).execute()
            case .run(let options):
                return try await RunCommand(options: options, console: console).execute()
            case .serve(let options):
                return try await ServeCommand(options: options, console: console).execute()
            case .report(let path):
                return try ReportCommand(path: path, console: console).execute()
            case .compare(let options):
                return try CompareCommand(options: options, console: console).execute()
            case .merge(let options):
                return try MergeCommand(options: options, console: console).execute()
            }
        } catch {
            console.error(error.message)
            if error.exitCode == .usage, let command = error.command {
                console.err("see: authload \(command) --help\n")
            } else if error.exitCode == .usage, error.command == nil, error.message.hasPrefix("unknown command") {
                console.err("see: authload --help\n")
            }
            return error.exitCode
        }
    }
}
