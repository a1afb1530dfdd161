/// Numbers every series of a run — each flow, then each of its steps — so hot-path records index arrays.
public struct MetricCatalog: Sendable {
    public private(set) var ids: [MetricID] = []
    private var flowBase: [Int] = []
    /// Series that time observed events rather than requests (see ``Flow/eventSteps``).
    private var events: Set<Int> = []

    /// - Parameters:
    ///   - flows: each flow's name and its step names, in profile order.
    ///   - events: per flow name, the steps that are events, not requests.
    public init(flows: [(name: String, steps: [String])], events: [String: Set<String>] = [:]) {
        for flow in flows {
            flowBase.append(ids.count)
            ids.append(MetricID(flow: flow.name, step: nil))
            for step in flow.steps {
                if events[flow.name]?.contains(step) == true { self.events.insert(ids.count) }
                ids.append(MetricID(flow: flow.name, step: step))
            }
        }
    }

    public var count: Int { ids.count }

    /// The series of flow number `flow` as a whole.
    public func flowMetric(_ flow: Int) -> Int { flowBase[flow] }

    /// The series of step number `step` of flow number `flow`.
    public func stepMetric(flow: Int, step: Int) -> Int { flowBase[flow] + 1 + step }

    public func isStep(_ metric: Int) -> Bool { ids[metric].step != nil }

    /// A step that is a request: what request rates and totals count.
    public func isRequest(_ metric: Int) -> Bool { isStep(metric) && !events.contains(metric) }

    public func isEvent(_ metric: Int) -> Bool { events.contains(metric) }
}
