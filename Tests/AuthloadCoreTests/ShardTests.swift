import AuthloadTesting
import Testing

@testable import AuthloadCore

/// Notes which users ran, by their (global) number and name, then sends one request.
private struct NotingFlow: Flow {
    let seen: Locked<[(Int, String)]>
    var stepNames: [String] { ["call"] }

    func run<C: Clock>(_ context: FlowContext<C>, user: isolated VirtualUser) async -> Outcome where C.Duration == Duration {
        seen.withLock { $0.append((user.index, user.identity.username)) }
        return await context.exchange(step: 0, HTTPRequest(method: "GET", target: "/ping")) { _ in .ok }.outcome
    }
}

@Suite("Sharded runs: each shard takes its exact share", .timeLimit(.minutes(1)))
struct ShardTests {
    let endpoint = Endpoint(host: "127.0.0.1", port: 1)

    @Test("I/N reads and checks; the shares of a cap add up to it")
    func parsing() {
        #expect(Shard("2/4") == Shard(index: 2, count: 4))
        for bad in ["4/4", "-1/4", "1/0", "1", "a/b", "1/2/3"] { #expect(Shard(bad) == nil, "\(bad)") }
        #expect((0..<4).map { Shard(index: $0, count: 4)!.share(of: 10) } == [3, 3, 2, 2])
        #expect((0..<3).map { Shard(index: $0, count: 3)!.share(of: 10_000) }.reduce(0, +) == 10_000)
    }

    /// The user numbers and names each of `count` shards of `plan` ran.
    func users(_ plan: RunPlan, shards count: Int) async -> [[(Int, String)]] {
        var result: [[(Int, String)]] = []
        for index in 0..<count {
            let clock = ManualClock()
            var plan = plan
            plan.shard = Shard(index: index, count: count)
            let seen = Locked<[(Int, String)]>([])
            let transport = SimulatedTransport(clock: clock) { _, _ in ServiceReply(HTTPResponse(status: 200), after: .milliseconds(5)) }
            let runner = Runner(plan: plan, flows: [NotingFlow(seen: seen)], transport: transport, endpoint: endpoint, clock: clock)
            _ = await clock.drive(runner.control) { await runner.run() }
            result.append(seen.withLock { $0 })
        }
        return result
    }

    @Test("closed model: four shards run every user exactly once, by global number and name")
    func closedUsers() async {
        var plan = RunPlan.closed(users: 10, rampUp: .seconds(1), duration: .seconds(2), think: .seconds(10))
        plan.flows = [FlowPlan(name: "note", kind: "note", options: ProfileReader(path: "flows[0]", value: .null))]
        let shards = await users(plan, shards: 4)
        #expect(shards.map { Set($0.map(\.0)) } == [[0, 4, 8], [1, 5, 9], [2, 6], [3, 7]])
        let names = shards.flatMap { $0.map(\.1) }
        #expect(Set(names) == Set((0..<10).map { "user\($0)" }), "templates see global numbers: no name collides")
        #expect(names.count == 10, "each user's first iteration once; think time keeps a second out of the run")
    }

    @Test("open model: every arrival of the schedule goes to exactly one shard")
    func openArrivals() async {
        var plan = RunPlan.open(rate: 10, duration: .seconds(2))
        plan.flows = [FlowPlan(name: "note", kind: "note", options: ProfileReader(path: "flows[0]", value: .null))]
        let shards = await users(plan, shards: 3)
        let arrivals = shards.flatMap { $0.map(\.0) }
        #expect(arrivals.sorted() == Array(0..<20), "20 arrivals in 2 s at 10/s, each once")
        #expect(shards.map(\.count) == [7, 7, 6])
        #expect(shards[1].allSatisfy { $0.0 % 3 == 1 })
    }
}
