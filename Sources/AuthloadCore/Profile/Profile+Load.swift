/// Reads the profile's `load` and `generator` sections.
///
/// ```json
/// "load": {"model": "closed", "users": 500, "rampUp": "1m", "duration": "10m", "thinkTime": "2s"}
/// "load": {"model": "open", "arrivalRate": "100/s", "maxUsers": 2000, "duration": "10m"}
/// "load": {"model": "open", "stages": [{"duration": "1m", "target": 100}, {"duration": "5m", "target": 100}]}
/// "generator": {"maxLagP99": "100ms", "maxDroppedRate": 0.01, "dropAfter": "1s", "unreachableAfter": "30s"}
/// ```
extension Profile {
    static func load(_ reader: ProfileReader) throws(ProfileError) -> LoadPlan {
        try reader.rejectUnknownKeys(allowed: [
            "model", "users", "maxUsers", "arrivalRate", "stages", "rampUp", "duration", "thinkTime", "gracefulStop"
        ])
        let model = LoadModel(rawValue: try reader.optional("model")?.oneOf(["closed", "open"]) ?? "closed") ?? .closed
        let stagesReader = try reader.optional("stages")
        var plan: LoadPlan
        switch model {
        case .closed:
            for key in ["maxUsers", "arrivalRate"] {
                if let field = try reader.optional(key) { throw field.error("only the open model (\"model\": \"open\") has \(key)") }
            }
            if let stagesReader {
                for key in ["users", "rampUp", "duration"] {
                    if let field = try reader.optional(key) {
                        throw field.error("load.stages sets the \(key == "users" ? "users" : "shape and length"); leave \(key) out")
                    }
                }
                let stages = try stages(stagesReader, wholeTargets: true)
                plan = LoadPlan(
                    users: Int(LoadSchedule(stages: stages).peak.rounded()), duration: stages.reduce(.zero) { $0 + $1.duration })
                plan.stages = stages
            } else {
                let duration = try reader.required("duration").positiveDuration()
                plan = LoadPlan(users: try reader.required("users").positiveInt(), duration: duration)
                if let rampUp = try reader.optional("rampUp") {
                    plan.rampUp = try rampUp.duration()
                    guard plan.rampUp <= duration else {
                        throw rampUp.error("must not be longer than load.duration (\(DurationText.format(duration)))")
                    }
                }
            }
            if let think = try reader.optional("thinkTime") { plan.thinkTime = try thinkTime(think) }
        case .open:
            if let users = try reader.optional("users") {
                throw users.error("the open model has no fixed population: arrivals come at arrivalRate; cap them with maxUsers")
            }
            if let think = try reader.optional("thinkTime") {
                throw think.error("an open-model user runs one flow and leaves, so there is no think time")
            }
            if let rampUp = try reader.optional("rampUp") { throw rampUp.error("ramp the open model's rate with load.stages") }
            let rate = try reader.optional("arrivalRate")
            switch (rate, stagesReader) {
            case (let rate?, nil):
                let perSecond = try arrivalRate(rate)
                guard perSecond > 0 else { throw rate.error("must be greater than 0 (a run of no arrivals measures nothing)") }
                plan = .open(rate: perSecond, duration: try reader.required("duration").positiveDuration())
            case (nil, let stagesReader?):
                if let duration = try reader.optional("duration") {
                    throw duration.error("load.stages sets the length; leave duration out")
                }
                plan = .open(stages: try stages(stagesReader, wholeTargets: false))
            case (.some, .some):
                throw reader.error("give either arrivalRate or stages, not both")
            case (nil, nil):
                throw reader.error("the open model needs arrivalRate (e.g. \"100/s\") or stages")
            }
            if let cap = try reader.optional("maxUsers") { plan.users = try cap.positiveInt() }
        }
        if let grace = try reader.optional("gracefulStop") { plan.gracefulStop = try grace.duration() }
        return plan
    }

    /// Reads `"100/s"`, `"600/m"`, `"3600/h"`, or a number of arrivals per second.
    static func arrivalRate(_ reader: ProfileReader) throws(ProfileError) -> Double {
        let perSecond: Double
        if let number = reader.value.numberValue {
            perSecond = number
        } else {
            let text = try reader.string()
            let parts = text.split(separator: "/", omittingEmptySubsequences: false)
            let units: [Substring: Double] = ["s": 1, "m": 60, "min": 60, "h": 3600]
            guard parts.count == 2, let count = Double(parts[0].trimmingSpaces), let unit = units[parts[1].trimmingSpaces[...]] else {
                throw reader.error("\"\(text)\" is not a rate (write e.g. \"100/s\", \"600/m\" or a number per second)")
            }
            perSecond = count / unit
        }
        guard perSecond >= 0, perSecond.isFinite, perSecond <= 1_000_000 else {
            throw reader.error("must be from 0 to 1,000,000 per second")
        }
        return perSecond
    }

    /// Reads `[{"duration": "30s", "target": 100}, ...]`: users (whole numbers) or arrival rates.
    static func stages(_ reader: ProfileReader, wholeTargets: Bool) throws(ProfileError) -> [LoadStage] {
        let elements = try reader.elements()
        guard !elements.isEmpty else { throw reader.error("needs at least one stage") }
        var stages: [LoadStage] = []
        for element in elements {
            try element.rejectUnknownKeys(allowed: ["duration", "target"])
            let duration = try element.required("duration").duration()
            let targetReader = try element.required("target")
            let target: Double
            if wholeTargets {
                target = Double(try targetReader.int())
                guard target >= 0 else { throw targetReader.error("must be 0 or more users, found \(Int(target))") }
            } else {
                target = try arrivalRate(targetReader)
            }
            stages.append(LoadStage(duration: duration, target: target))
        }
        guard stages.contains(where: { $0.duration > .zero }) else { throw reader.error("needs a stage longer than 0s") }
        guard stages.contains(where: { $0.target > 0 }) else { throw reader.error("needs a stage with a target above 0") }
        return stages
    }

    static func generator(_ reader: ProfileReader?) throws(ProfileError) -> GeneratorLimits {
        var limits = GeneratorLimits()
        guard let reader else { return limits }
        try reader.rejectUnknownKeys(allowed: ["maxLagP99", "maxDroppedRate", "dropAfter", "unreachableAfter"])
        if let lag = try reader.optional("maxLagP99") { limits.maxLagP99 = try lag.positiveDuration() }
        if let rate = try reader.optional("maxDroppedRate") { limits.maxDroppedRate = try rate.fraction() }
        if let after = try reader.optional("dropAfter") { limits.dropAfter = try after.positiveDuration() }
        if let after = try reader.optional("unreachableAfter") {
            let duration = try after.duration()
            limits.unreachableAfter = duration > .zero ? duration : nil
        }
        return limits
    }
}
