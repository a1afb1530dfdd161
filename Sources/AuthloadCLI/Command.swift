import AuthloadCore
import Foundation

/// What the user asked for, parsed from the command line before anything runs.
public enum Command: Equatable, Sendable {
    case run(RunOptions)
    case validate(profile: String)
    case serve(ServeOptions)
    case report(path: String)
    case compare(CompareOptions)
    case merge(MergeOptions)
    case help(topic: String?)
    case version

    public struct RunOptions: Equatable, Sendable {
        public var profile: String
        /// The report directory; by default `Reports/<profile>-<UTC timestamp>`.
        public var output: String?
        public var duration: Duration?
        public var users: Int?
        public var quiet = false
        /// Serve live metrics here (`--metrics-listen`), over the profile's `metrics.listen`.
        public var metricsListen: String?
        /// This copy's share of a sharded run: `--shard I/N`, or `--shard-from-env`.
        public var shard: Shard?
        /// Read the shard from the environment (`JOB_COMPLETION_INDEX` and `AUTHLOAD_SHARD_COUNT`) when the run starts.
        public var shardFromEnvironment = false
        /// When to start (`--start-at`): an RFC 3339 UTC time, or an offset such as `+30s` from now.
        public var startAt: String?
        /// Rehearse on virtual time against the embedded services in process (`--simulate`, or `authload simulate`).
        public var simulate = false
        /// The embedded services' models for a simulation (`--config`, as for `serve`), over the profile's `target.embedded`.
        public var config: String?
        /// Run a simulation as this many in-process shards, one thread each, merged (`--threads N`).
        public var threads: Int?
    }

    public struct CompareOptions: Equatable, Sendable {
        /// Result files or report directories: the baseline, then the run to judge.
        public var base = ""
        public var new = ""
        /// A profile whose `compare` section gives the tolerances; flags override it.
        public var profile: String?
        public var p50: Double?
        public var p99: Double?
        public var errorRate: Double?
        public var minLatencyDelta: Duration?
        /// Compare runs whose planned load differs (refused otherwise).
        public var force = false
        /// Compare a simulated run with a real one (`--allow-simulated`); refused otherwise.
        public var allowSimulated = false
    }

    public struct MergeOptions: Equatable, Sendable {
        /// Shards' report directories (or their `result.json`), or directories holding them.
        public var directories: [String] = []
        /// The merged report's directory; by default `Reports/<profile>-merged-<UTC timestamp>`.
        public var output: String?
        /// Merge the shards there are when some are missing, saying which in the report.
        public var partial = false
        public var quiet = false
    }

    public struct ServeOptions: Equatable, Sendable {
        public var host = "127.0.0.1"
        public var port = 8080
        public var config: String?
        /// Serve HTTPS with a self-signed certificate made at start.
        public var tls = false
        /// Where to write that certificate (PEM) for clients to trust.
        public var certificateOutput: String?
    }

    /// Parses the arguments after the program name.
    public static func parse(_ arguments: [String]) throws(CLIError) -> Command {
        guard let first = arguments.first else { return .help(topic: nil) }
        var rest = ArgumentQueue(Array(arguments.dropFirst()), command: first)
        switch first {
        case "-h", "--help", "help":
            return .help(topic: rest.next())
        case "--version", "version":
            return .version
        case "run", "simulate":
            if rest.wantsHelp { return .help(topic: first) }
            var options = RunOptions(profile: "")
            options.simulate = first == "simulate"
            while let argument = rest.next() {
                switch argument {
                case "--simulate": options.simulate = true
                case "--config", "-c": options.config = try rest.value(for: argument)
                case "--threads":
                    let text = try rest.value(for: argument)
                    guard let threads = Int(text), (1...64).contains(threads) else {
                        throw CLIError.usage("--threads: must be a whole number from 1 to 64, found \"\(text)\"", command: first)
                    }
                    options.threads = threads
                case "--out", "-o": options.output = try rest.value(for: argument)
                case "--duration", "-d":
                    let text = try rest.value(for: argument)
                    guard let duration = DurationText.parse(text) else {
                        throw CLIError.usage("--duration: \"\(text)\" is not a duration (write e.g. 30s, 2m, 1h)", command: "run")
                    }
                    guard duration > .zero else {
                        throw CLIError.usage("--duration: must be longer than 0s, found \"\(text)\"", command: "run")
                    }
                    options.duration = duration
                case "--users", "-u":
                    let text = try rest.value(for: argument)
                    guard let users = Int(text), users > 0 else {
                        throw CLIError.usage("--users: must be a whole number greater than 0, found \"\(text)\"", command: "run")
                    }
                    options.users = users
                case "--quiet", "-q": options.quiet = true
                case "--shard":
                    let value = try rest.value(for: argument)
                    guard let shard = Shard(value) else {
                        throw CLIError.usage("--shard \"\(value)\": expected I/N with 0 ≤ I < N, e.g. 0/4", command: "run")
                    }
                    options.shard = shard
                case "--shard-from-env": options.shardFromEnvironment = true
                case "--start-at":
                    let value = try rest.value(for: argument)
                    guard StartTime.parse(value, now: Date()) != nil else {
                        throw CLIError.usage("--start-at \"\(value)\": \(StartTime.expected)", command: "run")
                    }
                    options.startAt = value
                case "--metrics-listen":
                    let value = try rest.value(for: argument)
                    guard ListenAddress(value) != nil else {
                        throw CLIError.usage("--metrics-listen \"\(value)\": \(ListenAddress.expected)", command: "run")
                    }
                    options.metricsListen = value
                default: try rest.positional(argument, into: &options.profile, name: "PROFILE")
                }
            }
            guard !options.profile.isEmpty else {
                throw CLIError.usage("missing PROFILE (a JSON file, e.g. Profiles/demo.json)", command: first)
            }
            if options.config != nil && !options.simulate {
                throw CLIError.usage(
                    "--config needs --simulate (a real run's target is the profile's; `authload serve --config` serves a model)",
                    command: first)
            }
            if options.simulate, options.startAt != nil {
                throw CLIError.usage("--start-at: a simulation runs on virtual time and starts at once", command: first)
            }
            if let threads = options.threads, threads > 1 {
                guard options.simulate else { throw CLIError.usage("--threads needs --simulate (it shards a simulation)", command: first) }
                guard options.shard == nil, !options.shardFromEnvironment else {
                    throw CLIError.usage("--threads: give it or --shard/--shard-from-env, not both", command: first)
                }
                guard options.metricsListen == nil else {
                    throw CLIError.usage("--threads: live metrics serve one run; leave out --metrics-listen", command: first)
                }
            }
            return .run(options)
        case "validate":
            if rest.wantsHelp { return .help(topic: "validate") }
            var profile = ""
            while let argument = rest.next() { try rest.positional(argument, into: &profile, name: "PROFILE") }
            guard !profile.isEmpty else { throw CLIError.usage("missing PROFILE", command: "validate") }
            return .validate(profile: profile)
        case "serve":
            if rest.wantsHelp { return .help(topic: "serve") }
            var options = ServeOptions()
            while let argument = rest.next() {
                switch argument {
                case "--port", "-p":
                    let text = try rest.value(for: argument)
                    guard let port = Int(text), (0...65535).contains(port) else {
                        throw CLIError.usage("--port: must be a number from 0 to 65535, found \"\(text)\"", command: "serve")
                    }
                    options.port = port
                case "--host": options.host = try rest.value(for: argument)
                case "--config", "-c": options.config = try rest.value(for: argument)
                case "--tls": options.tls = true
                case "--cert-out": options.certificateOutput = try rest.value(for: argument)
                default: throw CLIError.usage("unexpected argument \"\(argument)\"", command: "serve")
                }
            }
            if options.certificateOutput != nil && !options.tls {
                throw CLIError.usage("--cert-out needs --tls (a plain HTTP server has no certificate)", command: "serve")
            }
            return .serve(options)
        case "report":
            if rest.wantsHelp { return .help(topic: "report") }
            var path = ""
            while let argument = rest.next() { try rest.positional(argument, into: &path, name: "REPORT_DIR") }
            guard !path.isEmpty else {
                throw CLIError.usage("missing REPORT_DIR (a report directory or its result.json)", command: "report")
            }
            return .report(path: path)
        case "compare":
            if rest.wantsHelp { return .help(topic: "compare") }
            return .compare(try parseCompare(&rest))
        case "merge":
            if rest.wantsHelp { return .help(topic: "merge") }
            var options = MergeOptions()
            while let argument = rest.next() {
                switch argument {
                case "--out", "-o": options.output = try rest.value(for: argument)
                case "--partial": options.partial = true
                case "--quiet", "-q": options.quiet = true
                default:
                    guard !argument.hasPrefix("-") else { throw CLIError.usage("unknown option \"\(argument)\"", command: "merge") }
                    options.directories.append(argument)
                }
            }
            guard !options.directories.isEmpty else {
                throw CLIError.usage("missing DIR (the shards' report directories, or one directory holding them)", command: "merge")
            }
            return .merge(options)
        default:
            throw CLIError.usage(
                "unknown command \"\(first)\" (commands: run, simulate, validate, serve, report, compare, merge, help)", command: nil)
        }
    }
}

extension Command {
    fileprivate static func parseCompare(_ rest: inout ArgumentQueue) throws(CLIError) -> CompareOptions {
        var options = CompareOptions()
        var paths: [String] = []
        func fraction(_ option: String, _ text: String) throws(CLIError) -> Double {
            guard let value = CompareTolerances.parseFraction(text) else {
                throw CLIError.usage("\(option): \"\(text)\" is not a tolerance (write e.g. 20% or 0.2)", command: "compare")
            }
            return value
        }
        while let argument = rest.next() {
            switch argument {
            case "--profile", "-p": options.profile = try rest.value(for: argument)
            case "--force": options.force = true
            case "--allow-simulated": options.allowSimulated = true
            case "--p50": options.p50 = try fraction(argument, rest.value(for: argument))
            case "--p99": options.p99 = try fraction(argument, rest.value(for: argument))
            case "--error-rate": options.errorRate = try fraction(argument, rest.value(for: argument))
            case "--min-delta":
                let text = try rest.value(for: argument)
                guard let duration = DurationText.parse(text) else {
                    throw CLIError.usage("--min-delta: \"\(text)\" is not a duration (write e.g. 1ms)", command: "compare")
                }
                options.minLatencyDelta = duration
            default:
                guard !argument.hasPrefix("-") else { throw CLIError.usage("unknown option \"\(argument)\"", command: "compare") }
                paths.append(argument)
            }
        }
        guard paths.count == 2 else {
            throw CLIError.usage(
                paths.count < 2
                    ? "needs BASE and NEW (result.json files or report directories)"
                    : "unexpected argument \"\(paths[2])\" (only BASE and NEW)", command: "compare")
        }
        options.base = paths[0]
        options.new = paths[1]
        return options
    }
}

/// The arguments left to read, with the error messages every command shares.
fileprivate struct ArgumentQueue {
    private var arguments: [String]
    let command: String

    init(_ arguments: [String], command: String) {
        self.arguments = arguments
        self.command = command
    }

    var wantsHelp: Bool { arguments.contains("--help") || arguments.contains("-h") }

    mutating func next() -> String? { arguments.isEmpty ? nil : arguments.removeFirst() }

    mutating func value(for option: String) throws(CLIError) -> String {
        guard let value = next(), !value.hasPrefix("--") else {
            throw CLIError.usage("\(option) needs a value", command: command)
        }
        return value
    }

    func positional(_ argument: String, into slot: inout String, name: String) throws(CLIError) {
        guard !argument.hasPrefix("-") else { throw CLIError.usage("unknown option \"\(argument)\"", command: command) }
        guard slot.isEmpty else { throw CLIError.usage("unexpected argument \"\(argument)\" (only one \(name))", command: command) }
        slot = argument
    }
}
