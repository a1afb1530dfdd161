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
    static func closed(
        users: Int, rampUp: Duration = .zero, duration: Duration, think: Duration,
        stepTimeout: Duration = .seconds(10), grace: Duration = .seconds(10)
    ) -> RunPlan {
        RunPlan(
            name: "test",
            target: .url(TargetURL(endpoint: Endpoint(host: "127.0.0.1", port: 1))),
            load: LoadPlan(users: users, rampUp: rampUp, duration: duration, thinkTime: .fixed(think), gracefulStop: grace),
            flows: [FlowPlan(name: "ping", kind: "ping", options: ProfileReader(path: "flows[0]", value: .null))],
            users: UserFeeder(),
            timeouts: Timeouts(step: stepTimeout, flow: .seconds(120)))
    }
}

/// A one-request flow, so the flow's time is that request's time from the flow's due instant.
struct SingleRequestFlow: Flow {
    var stepNames: [String] { ["request"] }

    func run<C: Clock>(_ context: FlowContext<C>, user: isolated VirtualUser) async -> Outcome where C.Duration == Duration {
        await context.exchange(step: 0, HTTPRequest(method: "GET", target: "/ping")) { response in
            response.status == 200 ? .ok : Outcome(.httpError, "\(response.status)")
        }.outcome
    }
}

extension RunPlan {
    /// An open-model plan with one flow of `flow`'s kind, for engine tests.
    static func open(
        rate: Double = 0, duration: Duration = .zero, stages: [LoadStage] = [], maxUsers: Int = LoadPlan.defaultMaxUsers,
        stepTimeout: Duration = .seconds(10)
    ) -> RunPlan {
        RunPlan(
            name: "test",
            target: .url(TargetURL(endpoint: Endpoint(host: "127.0.0.1", port: 1))),
            load: .open(rate: rate, duration: duration, stages: stages, maxUsers: maxUsers),
            flows: [FlowPlan(name: "visit", kind: "single", options: ProfileReader(path: "flows[0]", value: .null))],
            users: UserFeeder(),
            timeouts: Timeouts(step: stepTimeout, flow: .seconds(120)))
    }
}
