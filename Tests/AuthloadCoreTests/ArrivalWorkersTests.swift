import AuthloadTesting
import Testing

@testable import AuthloadCore

@Suite("Open-model arrivals run by reused workers, on a manual clock", .timeLimit(.minutes(1)))
struct ArrivalWorkersTests {
    let clock = ManualClock()
    let endpoint = Endpoint(host: "127.0.0.1", port: 1)

    /// A run of `plan` against a server answering in `latency`, and the arrivals each new worker started with.
    func run(_ plan: RunPlan, latency: Duration) async -> (outcome: RunOutcome, workers: [Int]) {
        let transport = SimulatedTransport(clock: clock) { _, _ in ServiceReply(HTTPResponse(status: 200), after: latency) }
        let workers = Locked<[Int]>([])
        let hooks = RunHooks(workerStarted: { number in workers.withLock { $0.append(number) } })
        let runner = Runner(plan: plan, flows: [SingleRequestFlow()], transport: transport, endpoint: endpoint, clock: clock, hooks: hooks)
        let outcome = await clock.drive(runner.control) { await runner.run() }
        return (outcome, workers.withLock { $0 })
    }

    @Test("arrivals that each end before the next is due all run on one worker")
    func oneWorkerForSequentialArrivals() async {
        // 50 arrivals/s for 10 s, 10 ms flows: arrival k ends 10 ms before arrival k + 1 is due.
        let (outcome, workers) = await run(.open(rate: 50, duration: .seconds(10)), latency: .milliseconds(10))
        #expect(outcome.generator.started == 500 && outcome.generator.dropped == 0)
        #expect(outcome.iterations == 500)
        #expect(workers == [0])
    }

    @Test("a worker is started only for an arrival that finds every worker busy, and later arrivals reuse them")
    func workersAsManyAsConcurrentVisits() async throws {
        // 100 arrivals/s for 10 s, 950 ms flows: 95 visits run at once (96 where one ends as the next is due).
        let (outcome, workers) = await run(.open(rate: 100, duration: .seconds(10)), latency: .milliseconds(950))
        #expect(outcome.generator.started == 1000 && outcome.iterations == 1000)
        #expect((95...96).contains(workers.count), "\(workers.count) workers")
        // The first 95 arrivals found no worker parked; later, at most one arrival due as a visit ended did.
        #expect(Array(workers.prefix(95)) == Array(0..<95))
        let flow = try #require(outcome.measured.metrics.first { $0.id == MetricID(flow: "visit", step: nil) })
        #expect(flow.count == 1000 && flow.errors == 0)
        #expect(flow.p99Micros == 950_000)
    }

    @Test("the maxUsers cap bounds the workers, and what it turns away is counted dropped as before")
    func capBoundsWorkers() async {
        // 10 arrivals/s, 950 ms flows, at most 5 users alive: arrivals 5–9 of each second find the cap reached.
        let (outcome, workers) = await run(.open(rate: 10, duration: .seconds(10), maxUsers: 5), latency: .milliseconds(950))
        #expect(outcome.generator.droppedAtCap == 50)
        #expect(outcome.generator.started == 50 && outcome.iterations == 50)
        #expect(workers == [0, 1, 2, 3, 4])
        #expect(outcome.measured.timeseries.allSatisfy { $0.activeUsers <= 5 })
    }

    @Test("visits still running when the grace period ends are cancelled, and every worker ends with the run")
    func graceCancelsRunningVisits() async throws {
        // 10 arrivals/s for 2 s, each flow waiting 30 s for its response; the grace period is 3 s.
        var plan = RunPlan.open(rate: 10, duration: .seconds(2), stepTimeout: .seconds(60))
        plan.load.gracefulStop = .seconds(3)
        let (outcome, workers) = await run(plan, latency: .seconds(30))
        #expect(workers.count == 20)
        #expect(outcome.generator.started == 20)
        #expect(outcome.elapsed == .seconds(5))
        #expect(outcome.measured.errors.contains { $0.kind == .cancelled && $0.id.step == nil && $0.count == 20 })
    }

    @Test("a worker's user is renewed for each arrival as a new user of that number: identity, random draws, a fresh session")
    func renewedUserIsNew() async {
        // 50 arrivals/s, 10 ms flows: every arrival runs on the one worker, on the user it renews.
        let seen = Locked<[UserSnapshot]>([])
        let transport = SimulatedTransport(clock: clock) { _, _ in ServiceReply(HTTPResponse(status: 200), after: .milliseconds(10)) }
        let workers = Locked(0)
        let hooks = RunHooks(workerStarted: { _ in workers.withLock { $0 += 1 } })
        let plan = RunPlan.open(rate: 50, duration: .seconds(1))
        let runner = Runner(
            plan: plan, flows: [SessionNotingFlow(seen: seen)], transport: transport, endpoint: endpoint, clock: clock, hooks: hooks)
        let outcome = await clock.drive(runner.control) { await runner.run() }
        #expect(outcome.iterations == 50 && workers.withLock { $0 } == 1)
        let snapshots = seen.withLock { $0 }
        #expect(snapshots.map(\.index) == Array(0..<50))
        for snapshot in snapshots {
            // What a user made afresh for this arrival would hold, before its flow drew from it.
            let fresh = VirtualUser(index: snapshot.index, identity: plan.users.identity(for: snapshot.index), seed: plan.seed)
            let draw = await fresh.drawForTest()
            #expect(snapshot.username == "user\(snapshot.index)")
            #expect(snapshot.iterations == 1 && snapshot.cookiesEmpty && snapshot.sessionID == nil && snapshot.connectionFailures == 0)
            #expect(snapshot.draw == draw, "arrival \(snapshot.index)")
        }
    }

    @Test("renewing a user forgets its session, as a new actor would start without one")
    func renewForgetsSession() async {
        let users = UserFeeder(templates: ["username": "u{n}", "password": "p{n}", "tenant": "acme"])
        let user = VirtualUser(index: 3, identity: users.identity(for: 3), seed: 9)
        await user.spoilForTest()
        await user.renew(index: 4, users: users, seed: 9)
        let fresh = VirtualUser(index: 4, identity: users.identity(for: 4), seed: 9)
        let (renewed, made) = (await user.stateForTest(), await fresh.stateForTest())
        #expect(renewed == made)
        #expect(renewed.index == 4 && renewed.username == "u4")
        #expect(await user.identity == users.identity(for: 4))
    }

    @Test("with none parked the generator is told to start a worker, and once closed or full a worker is told to end")
    func handAndNext() async {
        let workers = ArrivalWorkers<Int>(executor: nil, maxIdle: 0)
        #expect(!workers.hand(1))
        // No room to park: the worker ends, and its visit's live count ends first all the same.
        let ended = Locked(0)
        #expect(await workers.next(parked: { ended.withLock { $0 += 1 } }) == nil)
        let closed = ArrivalWorkers<Int>(executor: nil)
        closed.close()
        #expect(await closed.next(parked: { ended.withLock { $0 += 1 } }) == nil)
        #expect(closed.idleCount == 0 && !closed.hand(2))
        #expect(ended.withLock { $0 } == 2)
    }
}

/// What a flow saw of its user as it began.
struct UserSnapshot: Equatable {
    var index: Int
    var username: String
    var iterations: Int
    var cookiesEmpty: Bool
    var sessionID: String?
    var connectionFailures: Int
    var draw: UInt64
}

/// Notes its user as it finds it, then leaves a session behind (cookies, a session id, a failure) for the next
/// arrival's user not to see.
private struct SessionNotingFlow: Flow {
    let seen: Locked<[UserSnapshot]>
    var stepNames: [String] { ["call"] }

    func run<C: Clock>(_ context: FlowContext<C>, user: isolated VirtualUser) async -> Outcome where C.Duration == Duration {
        // pickFlow draws nothing with one flow, so this is the user's first draw.
        seen.withLock { $0.append(user.stateForTest()) }
        user.spoilForTest()
        return await context.exchange(step: 0, HTTPRequest(method: "GET", target: "/ping")) { _ in .ok }.outcome
    }
}

extension VirtualUser {
    func stateForTest() -> UserSnapshot {
        var random = self.random
        return UserSnapshot(
            index: index, username: identity.username, iterations: iterations, cookiesEmpty: cookies.isEmpty, sessionID: sessionID,
            connectionFailures: connectionFailures, draw: random.next())
    }

    func drawForTest() -> UInt64 {
        var random = self.random
        return random.next()
    }

    /// Leaves a session and a history behind.
    func spoilForTest() {
        cookies.store(from: ["Set-Cookie": "s=1"])
        sessionID = "session"
        connectionFailures = 2
        _ = random.next()
    }
}
