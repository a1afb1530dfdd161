/// A validated profile: everything a run needs, with defaults filled in and units resolved.
public struct RunPlan: Sendable {
    public var name: String
    public var target: TargetPlan
    public var load: LoadPlan
    public var flows: [FlowPlan]
    /// Where each virtual user's identity (username, password, other columns) comes from.
    public var users: UserFeeder
    public var timeouts: Timeouts
    /// Who owns connections, how long they live, where they come from and how TLS is checked: one value for the
    /// runner and the transport alike.
    public var connections: ConnectionSettings
    /// Pass/fail rules; any failure makes the run exit 2.
    public var thresholds: [Threshold]
    /// Length of one time-series interval (default 1 s).
    public var interval: Duration
    /// How often a running run saves `result.json` and appends to `timeseries.csv` (`metrics.checkpoint`),
    /// so a killed run still leaves a report to rebuild.
    public var checkpoint: Duration = .seconds(10)
    /// Where live metrics are served for Prometheus (`metrics.listen`, `HOST:PORT` or `PORT`); nil serves none.
    public var metricsListen: String?
    /// How long live metrics stay served after the run, so the last scrape sees the final figures (`metrics.linger`).
    public var metricsLinger: Duration = .seconds(5)
    /// This copy's share of a sharded run (`--shard I/N`); nil runs the whole profile.
    public var shard: Shard?
    /// Seeds every random choice of the run (think times, flow picks), so runs can be repeated.
    public var seed: UInt64
    /// The profile as written, echoed into reports.
    public var source: JSONValue
    /// When the generator itself failed to keep its schedule (exit 3): the run then says nothing about the server.
    public var generator = GeneratorLimits()
    /// What `authload compare` tolerates against a baseline run of this profile.
    public var compare = CompareTolerances()

    public init(
        name: String, target: TargetPlan, load: LoadPlan, flows: [FlowPlan], users: UserFeeder,
        timeouts: Timeouts = Timeouts(), connections: ConnectionSettings = ConnectionSettings(),
        thresholds: [Threshold] = [], interval: Duration = .seconds(1), seed: UInt64 = 1, source: JSONValue = .null
    ) {
        self.name = name
        self.target = target
        self.load = load
        self.flows = flows
        self.users = users
        self.timeouts = timeouts
        self.connections = connections
        self.thresholds = thresholds
        self.interval = interval
        self.seed = seed
        self.source = source
    }
}

public enum TargetPlan: Sendable {
    /// A server somewhere else, e.g. `https://auth.staging.example.com`.
    case url(TargetURL)
    /// The embedded staging server, started in this process on 127.0.0.1; its options as written.
    case embedded(ProfileReader)
}

/// How load is generated: who starts flows, and when.
public enum LoadModel: String, Sendable, Equatable {
    /// A population of users, each looping flow → think → flow: load follows the server's speed.
    case closed
    /// Arrivals at a rate, each a new user running one flow: load does not slow down with the server.
    case open
}

/// The load: its model, how much of it, for how long, and its shape over time.
public struct LoadPlan: Sendable, Equatable {
    public var model: LoadModel
    /// Closed model: the population (with stages, the highest target). Open model: the cap on users
    /// alive at once (`maxUsers`); an arrival that finds the cap reached is dropped.
    public var users: Int
    /// Open model without stages: arrivals per second.
    public var arrivalRate: Double
    /// The shape over time (users or arrivals per second); empty means constant, after `rampUp`.
    public var stages: [LoadStage]
    public var rampUp: Duration
    public var duration: Duration
    public var thinkTime: ThinkTime
    /// How long in-flight flows may run on after the end (or a stop) before they are cancelled.
    public var gracefulStop: Duration

    public init(
        users: Int, rampUp: Duration = .zero, duration: Duration, thinkTime: ThinkTime = ThinkTime(),
        gracefulStop: Duration = .seconds(10)
    ) {
        self.model = .closed
        self.users = users
        self.arrivalRate = 0
        self.stages = []
        self.rampUp = rampUp
        self.duration = duration
        self.thinkTime = thinkTime
        self.gracefulStop = gracefulStop
    }

    /// An open-model load: `rate` arrivals per second for `duration`, or the shape of `stages`.
    public static func open(
        rate: Double = 0, duration: Duration = .zero, stages: [LoadStage] = [], maxUsers: Int = LoadPlan.defaultMaxUsers,
        gracefulStop: Duration = .seconds(10)
    ) -> LoadPlan {
        var plan = LoadPlan(
            users: maxUsers, duration: stages.isEmpty ? duration : stages.reduce(.zero) { $0 + $1.duration },
            gracefulStop: gracefulStop)
        plan.model = .open
        plan.arrivalRate = rate
        plan.stages = stages
        return plan
    }

    /// The open model's default cap on users alive at once.
    public static let defaultMaxUsers = 10_000

    /// The level over time: users (closed) or arrivals per second (open).
    public var schedule: LoadSchedule {
        if !stages.isEmpty { return LoadSchedule(stages: stages) }
        switch model {
        case .open: return LoadSchedule(constant: arrivalRate, duration: duration)
        case .closed:
            return LoadSchedule(stages: [
                LoadStage(duration: rampUp, target: Double(users)),
                LoadStage(duration: duration - rampUp, target: Double(users))
            ])
        }
    }

    /// How many users get an identity over the run: the population (closed), or every arrival (open:
    /// each arrival is a new user), so a `unique` feeder can be checked before the run.
    public var identitiesNeeded: Int {
        model == .closed ? users : schedule.arrivalCount
    }

    /// Where the load is what was asked for: after the ramp-up (closed model without stages), else from the start.
    public var steadyFrom: Duration { stages.isEmpty && model == .closed ? rampUp : .zero }
}

/// A pause drawn uniformly from `min...max`.
public struct ThinkTime: Sendable, Equatable {
    public var min: Duration
    public var max: Duration

    public init(min: Duration = .zero, max: Duration = .zero) {
        self.min = min
        self.max = max
    }

    public static func fixed(_ duration: Duration) -> ThinkTime { ThinkTime(min: duration, max: duration) }
}

/// One entry of `flows`: its kind picks the implementation, which reads its own options.
public struct FlowPlan: Sendable {
    public var name: String
    public var kind: String
    public var weight: Double
    public var options: ProfileReader

    public init(name: String, kind: String, weight: Double = 1, options: ProfileReader) {
        self.name = name
        self.kind = kind
        self.weight = weight
        self.options = options
    }
}

public struct Timeouts: Sendable, Equatable {
    /// Longest a single request may take.
    public var step: Duration
    /// Longest a whole flow iteration may take; its steps share this deadline.
    public var flow: Duration

    public init(step: Duration = .seconds(10), flow: Duration = .seconds(120)) {
        self.step = step
        self.flow = flow
    }
}

/// A parsed `baseURL`: `http(s)://host[:port][/prefix]`.
public struct TargetURL: Sendable, Equatable, CustomStringConvertible {
    public var endpoint: Endpoint
    /// Path prefix without a trailing slash ("" for none).
    public var basePath: String

    public init(endpoint: Endpoint, basePath: String = "") {
        self.endpoint = endpoint
        self.basePath = basePath
    }

    /// Parses an absolute http or https URL; nil describes the problem.
    public static func parse(_ text: String) -> Result<TargetURL, ProfileError> {
        let scheme: String
        var rest: Substring
        if text.hasPrefix("http://") {
            scheme = "http"
            rest = text.dropFirst(7)
        } else if text.hasPrefix("https://") {
            scheme = "https"
            rest = text.dropFirst(8)
        } else {
            return .failure(ProfileError("", "\"\(text)\" must start with http:// or https://"))
        }
        let authority = rest.prefix { $0 != "/" }
        rest = rest.dropFirst(authority.count)
        var host = authority
        var port = scheme == "https" ? 443 : 80
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else {
                return .failure(ProfileError("", "\"\(text)\" has an unclosed IPv6 bracket"))
            }
            host = authority[authority.index(after: authority.startIndex)..<close]
            let after = authority[authority.index(after: close)...]
            if after.hasPrefix(":") {
                guard let p = Int(after.dropFirst()), (1...65535).contains(p) else {
                    return .failure(ProfileError("", "\"\(text)\" has an invalid port"))
                }
                port = p
            }
        } else if let colon = authority.lastIndex(of: ":") {
            host = authority[..<colon]
            guard let p = Int(authority[authority.index(after: colon)...]), (1...65535).contains(p) else {
                return .failure(ProfileError("", "\"\(text)\" has an invalid port"))
            }
            port = p
        }
        guard !host.isEmpty else { return .failure(ProfileError("", "\"\(text)\" has no host")) }
        let basePath = rest.hasSuffix("/") ? String(rest.dropLast()) : String(rest)
        return .success(TargetURL(endpoint: Endpoint(host: String(host), port: port, tls: scheme == "https"), basePath: basePath))
    }

    public var description: String { endpoint.description + basePath }
}
