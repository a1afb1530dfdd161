/// Turns a profile's JSON text into a validated ``RunPlan``.
///
/// Every problem becomes one ``ProfileError`` naming its field, e.g. `load.users: must be greater than 0`.
/// Flow- and target-specific options are kept as ``ProfileReader``s for their own modules to validate.
///
/// ```swift
/// let plan = try Profile.parse(text, fileName: "demo.json") { path in try? String(contentsOfFile: path) }
/// ```
public enum Profile {
    /// Reads a file a profile names (`users.csv`): its text, or nil when it cannot be read. Core does no
    /// I/O of its own, so the caller decides where relative paths point.
    public typealias FileReader = (String) -> String?

    public static func parse(_ text: String, fileName: String, readFile: FileReader = { _ in nil }) throws(ProfileError) -> RunPlan {
        let json: JSONValue
        do {
            json = try JSONValue.parse(text)
        } catch {
            throw ProfileError(fileName, error.description)
        }
        return try plan(from: ProfileReader(path: "", value: json), readFile: readFile)
    }

    static func plan(from root: ProfileReader, readFile: FileReader = { _ in nil }) throws(ProfileError) -> RunPlan {
        try root.rejectUnknownKeys(allowed: [
            "$schema", "name", "target", "load", "flows", "users", "timeouts", "connections", "metrics", "seed", "description",
            "thresholds", "generator", "compare"
        ])
        let name = try root.required("name").string()
        guard !name.isEmpty, name.allSatisfy({ $0.isLetter || $0.isNumber || "-_.".contains($0) }) else {
            throw ProfileError("name", "use letters, digits, '-', '_' or '.' (it names the report directory)")
        }
        let timeouts = try self.timeouts(root.optional("timeouts"))
        var interval = Duration.seconds(1)
        var checkpoint = Duration.seconds(10)
        var listen: String?
        var linger = Duration.seconds(5)
        if let metrics = try root.optional("metrics") {
            try metrics.rejectUnknownKeys(allowed: ["interval", "checkpoint", "listen", "linger"])
            if let i = try metrics.optional("interval") { interval = try i.positiveDuration() }
            if let c = try metrics.optional("checkpoint") { checkpoint = try c.positiveDuration() }
            if let l = try metrics.optional("listen") {
                let text = try l.string()
                guard ListenAddress(text) != nil else { throw l.error(ListenAddress.expected) }
                listen = text
            }
            if let l = try metrics.optional("linger") { linger = try l.duration() }
        }
        var seed: UInt64 = 1
        if let s = try root.optional("seed") {
            let value = try s.int()
            guard value >= 0 else { throw s.error("must be 0 or greater") }
            seed = UInt64(value)
        }
        let targetReader = try root.required("target")
        let target = try self.target(targetReader)
        var plan = RunPlan(
            name: name,
            target: target,
            load: try load(root.required("load")),
            flows: try flows(root.required("flows")),
            users: try users(root.optional("users"), seed: seed, readFile: readFile),
            timeouts: timeouts,
            connections: try connections(root, target: target, targetReader: targetReader),
            thresholds: try thresholds(root.optional("thresholds")),
            interval: interval,
            seed: seed,
            source: root.value
        )
        plan.generator = try generator(root.optional("generator"))
        plan.checkpoint = checkpoint
        plan.metricsListen = listen
        plan.metricsLinger = linger
        if let compare = try root.optional("compare") { plan.compare = try CompareTolerances.read(compare) }
        return plan
    }

    static func target(_ reader: ProfileReader) throws(ProfileError) -> TargetPlan {
        try reader.rejectUnknownKeys(allowed: ["baseURL", "embedded", "insecureSkipTLSVerify", "tls", "http"])
        let base = try reader.optional("baseURL")
        let embedded = try reader.optional("embedded")
        switch (base, embedded) {
        case (let base?, nil):
            switch TargetURL.parse(try base.string()) {
            case .success(let url): return .url(url)
            case .failure(let error): throw base.error(error.message)
            }
        case (nil, let embedded?):
            _ = try embedded.object()
            return .embedded(embedded)
        case (.some, .some):
            throw reader.error("give either baseURL or embedded, not both")
        case (nil, nil):
            throw reader.error("needs baseURL (a server to test) or embedded (the built-in staging server)")
        }
    }

    /// Reads `"2s"` (fixed) or `{"min": "1s", "max": "3s"}`.
    public static func thinkTime(_ reader: ProfileReader) throws(ProfileError) -> ThinkTime {
        if reader.value.stringValue != nil { return .fixed(try reader.duration()) }
        try reader.rejectUnknownKeys(allowed: ["min", "max"])
        let min = try reader.required("min").duration()
        let maxReader = try reader.required("max")
        let max = try maxReader.duration()
        guard max >= min else { throw maxReader.error("must not be shorter than min (\(DurationText.format(min)))") }
        return ThinkTime(min: min, max: max)
    }

    static func flows(_ reader: ProfileReader) throws(ProfileError) -> [FlowPlan] {
        let elements = try reader.elements()
        guard !elements.isEmpty else { throw reader.error("needs at least one flow") }
        var names = Set<String>()
        var plans: [FlowPlan] = []
        for element in elements {
            let nameReader = try element.required("name")
            let name = try nameReader.string()
            guard !name.isEmpty, !name.contains("."), !name.contains(",") else {
                throw nameReader.error("must be non-empty without '.' or ','")
            }
            guard names.insert(name).inserted else { throw nameReader.error("\"\(name)\" is used by another flow") }
            var weight = 1.0
            if let w = try element.optional("weight") {
                weight = try w.double()
                guard weight > 0, weight.isFinite else { throw w.error("must be greater than 0") }
            }
            plans.append(FlowPlan(name: name, kind: try element.required("kind").string(), weight: weight, options: element))
        }
        return plans
    }

    /// Reads `users`: templates (`username`, `password`, and `fields` for other columns) or a `csv` file
    /// with an `assignment`.
    static func users(_ reader: ProfileReader?, seed: UInt64, readFile: FileReader) throws(ProfileError) -> UserFeeder {
        guard let reader else { return UserFeeder() }
        try reader.rejectUnknownKeys(allowed: ["username", "password", "fields", "csv", "assignment"])
        if let csv = try reader.optional("csv") {
            for key in ["username", "password", "fields"] {
                if try reader.optional(key) != nil { throw reader.error("give either csv or templates (\(key)), not both") }
            }
            let path = try csv.string()
            guard let text = readFile(path) else {
                throw csv.error("cannot read \"\(path)\" (paths are relative to the current directory or the profile's)")
            }
            let assignment = try reader.optional("assignment")?.oneOf(UserFeeder.Assignment.allCases.map(\.rawValue)) ?? "sequential"
            let name = path.split(separator: "/").last.map(String.init) ?? path
            return try UserFeeder.csv(text, fileName: name, assignment: UserFeeder.Assignment(rawValue: assignment)!, seed: seed)
        }
        if let assignment = try reader.optional("assignment") { throw assignment.error("applies to a csv file only") }
        var templates: [String: String] = [:]
        func template(_ reader: ProfileReader) throws(ProfileError) -> String {
            let text = try reader.string()
            if let problem = UserFeeder.problem(inTemplate: text) { throw reader.error(problem) }
            return text
        }
        if let u = try reader.optional("username") { templates["username"] = try template(u) }
        if let p = try reader.optional("password") { templates["password"] = try template(p) }
        if let fields = try reader.optional("fields") {
            for key in try fields.object().keys { templates[key] = try template(fields.required(key)) }
        }
        return UserFeeder(templates: templates)
    }

    static func timeouts(_ reader: ProfileReader?) throws(ProfileError) -> Timeouts {
        var timeouts = Timeouts()
        guard let reader else { return timeouts }
        try reader.rejectUnknownKeys(allowed: ["step", "flow", "connect"])
        if let s = try reader.optional("step") { timeouts.step = try s.positiveDuration() }
        if let f = try reader.optional("flow") { timeouts.flow = try f.positiveDuration() }
        return timeouts
    }

    /// The one place the profile's connection settings are read: `connections`, `timeouts.connect`, and the target's
    /// `tls`, `insecureSkipTLSVerify` and `http`.
    static func connections(_ root: ProfileReader, target: TargetPlan, targetReader: ProfileReader) throws(ProfileError)
        -> ConnectionSettings
    {
        var settings = ConnectionSettings()
        if let connect = try root.optional("timeouts")?.optional("connect") { settings.connectTimeout = try connect.positiveDuration() }
        let insecure = try targetReader.optional("insecureSkipTLSVerify")
        if let tls = try targetReader.optional("tls") { settings.tls = try TargetTLS.read(tls, target: target, insecure: insecure) }
        settings.tls.insecureSkipTLSVerify = try insecure?.bool() ?? false
        if let http = try targetReader.optional("http") {
            settings.http = HTTPVersionChoice(rawValue: try http.oneOf(HTTPVersionChoice.allCases.map(\.rawValue)))!
        }
        guard let reader = try root.optional("connections") else { return settings }
        try reader.rejectUnknownKeys(allowed: ["policy", "poolSize", "idleTimeout", "lifetime", "sourceAddresses"])
        if try reader.optional("policy")?.oneOf(["per-user", "shared"]) == "shared" {
            if let lifetime = try reader.optional("lifetime") { throw lifetime.error("only means something with \"policy\": \"per-user\"") }
            settings.policy = .shared(poolSize: try reader.optional("poolSize")?.positiveInt() ?? ConnectionSettings.defaultPoolSize)
        } else {
            let idle = try reader.optional("idleTimeout")?.positiveDuration() ?? ConnectionSettings.defaultIdleTimeout
            let lifetime = try reader.optional("lifetime").map { r throws(ProfileError) in
                ConnectionLifetime(rawValue: try r.oneOf(ConnectionLifetime.allCases.map(\.rawValue)))!
            }
            settings.policy = .perUser(idleTimeout: idle, lifetime: lifetime ?? .iteration)
        }
        if let sources = try reader.optional("sourceAddresses") {
            settings.sourceAddresses = try sources.elements().map { element throws(ProfileError) in
                let address = try element.string()
                guard !address.isEmpty else { throw element.error("must be a local IP address, e.g. \"127.0.0.2\"") }
                return address
            }
        }
        return settings
    }
}
