/// Numbers every series of a run — each flow, then each of its steps — so hot-path records index arrays.
public struct MetricCatalog: Sendable {
    public private(set) var ids: [MetricID] = []
    private var flowBase: [Int] = []

    /// - Parameter flows: each flow's name and its step names, in profile order.
    public init(flows: [(name: String, steps: [String])]) {
        for flow in flows {
            flowBase.append(ids.count)
            ids.append(MetricID(flow: flow.name, step: nil))
            ids.append(contentsOf: flow.steps.map { MetricID(flow: flow.name, step: $0) })
        }
    }

    public var count: Int { ids.count }

    /// The series of flow number `flow` as a whole.
    public func flowMetric(_ flow: Int) -> Int { flowBase[flow] }

    /// The series of step number `step` of flow number `flow`.
    public func stepMetric(flow: Int, step: Int) -> Int { flowBase[flow] + 1 + step }

    public func isStep(_ metric: Int) -> Bool { ids[metric].step != nil }
}
