/// The load a run was planned with, as `result.json` records it: two runs are only comparable when it is the
/// same, since latency and errors grow with load; `authload compare` refuses them otherwise.
///
/// Figures are the whole profile's (with overrides applied), not a shard's share: every shard of a run
/// records the same load, and so does the merged run.
public struct PlannedLoad: Codable, Sendable, Equatable {
    /// `closed` or `open`.
    public var model: String
    /// Closed model: the population (with stages, the highest target). Open model: the cap on users alive at once.
    public var users: Int
    /// Open model without stages: arrivals per second; nil otherwise.
    public var arrivalsPerSecond: Double?
    public var rampUpSeconds: Double
    public var durationSeconds: Double
    /// Think time between a closed-model user's flows, seconds: with the users, it sets the request rate.
    public var thinkTimeMinSeconds: Double
    public var thinkTimeMaxSeconds: Double
    /// Each stage's length and target (users or arrivals per second); empty without stages.
    public var stages: [Stage]

    public struct Stage: Codable, Sendable, Equatable {
        public var durationSeconds: Double
        public var target: Double

        public init(durationSeconds: Double, target: Double) {
            self.durationSeconds = durationSeconds
            self.target = target
        }
    }

    public init(_ load: LoadPlan) {
        model = load.model.rawValue
        users = load.users
        arrivalsPerSecond = load.model == .open && load.stages.isEmpty ? load.arrivalRate : nil
        rampUpSeconds = load.rampUp.seconds
        durationSeconds = load.duration.seconds
        thinkTimeMinSeconds = load.thinkTime.min.seconds
        thinkTimeMaxSeconds = load.thinkTime.max.seconds
        stages = load.stages.map { Stage(durationSeconds: $0.duration.seconds, target: $0.target) }
    }
}
