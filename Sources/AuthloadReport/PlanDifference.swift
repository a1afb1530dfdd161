import AuthloadCore

/// One way two runs' plans differ, as `authload compare` says before judging NEW against BASE.
///
/// Latency and errors grow with load: a run of 2,000 users is slower than one of 500 against the same
/// server, so comparing them reports the load, not a regression. A difference that changes the load makes
/// `compare` refuse (unless forced); one that need not (the profile file's bytes, when the load is the same)
/// is only said.
public struct PlanDifference: Sendable, Equatable, CustomStringConvertible {
    /// What differs, e.g. `users`, `arrival rate`, `profile file digest`.
    public var what: String
    public var base: String
    public var new: String
    /// It changes the load the server saw.
    public var changesLoad: Bool

    public init(what: String, base: String, new: String, changesLoad: Bool) {
        self.what = what
        self.base = base
        self.new = new
        self.changesLoad = changesLoad
    }

    /// `users 2,000 → 500`.
    public var description: String { "\(what) \(base) → \(new)" }

    /// Every way NEW's plan differs from BASE's, load first; empty when they match.
    public static func between(base: RunResult, new: RunResult) -> [PlanDifference] {
        var found: [PlanDifference] = []
        func compare(_ what: String, _ base: String, _ new: String, load: Bool) {
            if base != new { found.append(PlanDifference(what: what, base: base, new: new, changesLoad: load)) }
        }
        let baseLoad = base.plan?.load
        let newLoad = new.plan?.load
        if let baseLoad, let newLoad {
            compare("load model", baseLoad.model, newLoad.model, load: true)
            compare(baseLoad.model == "open" ? "user cap" : "users", Format.count(baseLoad.users), Format.count(newLoad.users), load: true)
            compare("arrival rate", rate(baseLoad.arrivalsPerSecond), rate(newLoad.arrivalsPerSecond), load: true)
            compare("stages", stages(baseLoad), stages(newLoad), load: true)
            compare(
                "ramp-up", Format.duration(seconds: baseLoad.rampUpSeconds), Format.duration(seconds: newLoad.rampUpSeconds), load: true)
            compare(
                "duration", Format.duration(seconds: baseLoad.durationSeconds), Format.duration(seconds: newLoad.durationSeconds),
                load: true)
            compare("think time", think(baseLoad), think(newLoad), load: true)
        } else if (baseLoad == nil) != (newLoad == nil) {
            // An older result records no load: say that it could not be compared rather than pass it as equal.
            compare(
                "planned load", baseLoad == nil ? "not recorded" : "recorded", newLoad == nil ? "not recorded" : "recorded", load: false)
        }
        // Without a recorded load, the options that change it are all there is to tell a different load by.
        let optionsChangeLoad = baseLoad == nil || newLoad == nil
        compare("command-line options", words(base.plan?.overrides), words(new.plan?.overrides), load: optionsChangeLoad)
        compare("profile", base.profileName, new.profileName, load: false)
        if let baseDigest = base.plan?.profileDigest, let newDigest = new.plan?.profileDigest {
            compare("profile file digest", baseDigest, newDigest, load: false)
        }
        return found.sorted { $0.changesLoad && !$1.changesLoad }
    }

    private static func rate(_ value: Double?) -> String { value.map { Format.rate($0) + "/s" } ?? "none" }

    private static func stages(_ load: PlannedLoad) -> String {
        guard !load.stages.isEmpty else { return "none" }
        return load.stages.map { "\(Format.duration(seconds: $0.durationSeconds)) to \(Format.rate($0.target))" }.joined(separator: ", ")
    }

    private static func think(_ load: PlannedLoad) -> String {
        let min = Format.duration(seconds: load.thinkTimeMinSeconds)
        return load.thinkTimeMinSeconds == load.thinkTimeMaxSeconds ? min : min + "–" + Format.duration(seconds: load.thinkTimeMaxSeconds)
    }

    private static func words(_ overrides: [String]?) -> String {
        guard let overrides, !overrides.isEmpty else { return "none" }
        return overrides.joined(separator: " ")
    }
}
