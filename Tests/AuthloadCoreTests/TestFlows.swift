import AuthloadCore

/// A two-step flow against any server that answers `GET /ping`; 200 is success.
struct PingFlow: Flow {
    var stepNames: [String] { ["first", "second"] }

    func run<C: Clock>(_ context: FlowContext<C>, user: isolated VirtualUser) async -> Outcome where C.Duration == Duration {
        for step in stepNames.indices {
            let result = await context.exchange(step: step, HTTPRequest(method: "GET", target: "/ping")) { response in
                response.status == 200 ? .ok : Outcome(.httpError, "\(response.status)")
            }
            guard result.outcome.isOK else { return result.outcome }
        }
        return .ok
    }
}

extension RunPlan {
    /// A closed-model plan with one ping flow, for engine tests.
    static func closed(users: Int, rampUp: Duration = .zero, duration: Duration, think: Duration,
                       stepTimeout: Duration = .seconds(10), grace: Duration = .seconds(10)) -> RunPlan {
        RunPlan(
            name: "test",
            target: .url(TargetURL(endpoint: Endpoint(host: "127.0.0.1", port: 1))),
            load: LoadPlan(users: users, rampUp: rampUp, duration: duration, thinkTime: .fixed(think), gracefulStop: grace),
            flows: [FlowPlan(name: "ping", kind: "ping", options: ProfileReader(path: "flows[0]", value: .null))],
            users: UserFeeder(),
            timeouts: Timeouts(step: stepTimeout, flow: .seconds(120)))
    }
}
