import AuthloadCore
import AuthloadTesting
import Foundation
import Testing

@Suite("Open model on a manual clock", .timeLimit(.minutes(1)))
struct OpenModelTests {
    let clock = ManualClock()
    let endpoint = Endpoint(host: "127.0.0.1", port: 1)

    func flowSummary(_ outcome: RunOutcome) throws -> MetricSummary {
        try #require(outcome.measured.metrics.first { $0.id == MetricID(flow: "visit", step: nil) })
    }

    @Test("a 5 s server stall behind a pool of 10 connections shows in full in the flow p99, which a send-time measure would put at 10 ms")
    func stallIsNotOmitted() async throws {
        // 100 arrivals/s for 60 s; the server answers in 10 ms, except that it stalls once from 20 s to 25 s.
        // The 10 connections fill within 100 ms of the stall and ~500 arrivals queue behind it.
        let start = clock.now
        let stall = start.advanced(by: .seconds(20))..<start.advanced(by: .seconds(25))
        let fromSend = Locked(Histogram())
        let pool = PooledSimulatedTransport(clock: clock, connections: 10) { _, sentAt in
            let latency = stall.contains(sentAt) ? sentAt.duration(to: stall.upperBound) + .milliseconds(10) : .milliseconds(10)
            fromSend.withLock { $0.record(Int(latency.microseconds)) }
            return ServiceReply(HTTPResponse(status: 200), after: latency)
        }
        let runner = Runner(
            plan: .open(rate: 100, duration: .seconds(60)), flows: [SingleRequestFlow()], transport: pool,
            endpoint: endpoint, clock: clock)
        let outcome = await clock.drive(runner.control) { await runner.run() }

        let flow = try flowSummary(outcome)
        #expect(flow.count == 6000)
        #expect(flow.errors == 0)
        #expect((4_300_000...4_600_000).contains(flow.p99Micros), "flow p99 \(flow.p99Micros) µs")
        #expect(flow.p90Micros <= 10_100, "p90 stays at the base latency, found \(flow.p90Micros) µs")
        let request = try #require(outcome.measured.metrics.first { $0.id.step == "request" })
        #expect(request.p99Micros == flow.p99Micros, "the step's own time includes its queue too")
        // What a tool timing from the send would report: the stall all but vanishes.
        let sendP99 = fromSend.withLock { $0.value(atPercentile: 99) }
        #expect(sendP99 <= 10_100)
        #expect(flow.p99Micros > 400 * sendP99)
        #expect(outcome.generator.keptSchedule)
        #expect(outcome.generator.started == 6000 && outcome.generator.dropped == 0)
        #expect(outcome.generator.lagMaxMicros <= 1, "virtual time: every arrival started when due (1 µs is the lowest slot)")
    }

    @Test("past 1,000 arrivals a second the generator wakes once a millisecond: every arrival starts, at most 1 ms late")
    func arrivalsBatchPerMillisecond() async throws {
        // 5,000 arrivals/s for 2 s, 10 ms flows: five arrivals fall due in each millisecond.
        let transport = SimulatedTransport(clock: clock) { _, _ in ServiceReply(HTTPResponse(status: 200), after: .milliseconds(10)) }
        let runner = Runner(
            plan: .open(rate: 5_000, duration: .seconds(2)), flows: [SingleRequestFlow()], transport: transport, endpoint: endpoint,
            clock: clock)
        let outcome = await clock.drive(runner.control) { await runner.run() }
        #expect(outcome.generator.started == 10_000 && outcome.generator.dropped == 0)
        #expect(outcome.iterations == 10_000)
        // Batched: most arrivals wait for the millisecond's wake, none longer than it.
        #expect((700...1_000).contains(outcome.generator.lagMaxMicros), "lag max \(outcome.generator.lagMaxMicros) µs")
        #expect(outcome.generator.keptSchedule)
        // Each flow counts from its own due instant: the batch's wait is in its latency.
        let flow = try flowSummary(outcome)
        #expect(flow.p99Micros > 10_400 && flow.p99Micros <= 11_000, "flow p99 \(flow.p99Micros) µs")
    }

    @Test("arrivals due before the end that a stalled generator reaches only after it are counted dropped, not lost")
    func stallPastTheEnd() async throws {
        let start = clock.now
        let clock = self.clock
        // 1 s flows: the run is still draining (and the manual clock still moving) when the generator wakes.
        let transport = SimulatedTransport(clock: clock) { _, _ in ServiceReply(HTTPResponse(status: 200), after: .seconds(1)) }
        // 10 arrivals/s for 10 s; the generator stalls at the arrival due at 9.5 s until 10.2 s, past the end.
        let hooks = RunHooks { number, _ in
            if number == 95 { try? await clock.sleep(until: start.advanced(by: .milliseconds(10_200))) }
        }
        let runner = Runner(
            plan: .open(rate: 10, duration: .seconds(10)), flows: [SingleRequestFlow()], transport: transport, endpoint: endpoint,
            clock: clock, hooks: hooks)
        let outcome = await clock.drive(runner.control) { await runner.run() }
        #expect(outcome.generator.due == 100)
        #expect(outcome.generator.started == 95)
        #expect(outcome.generator.droppedLate == 5)
        #expect(outcome.iterations == 95)
    }

    @Test("arrivals are due at start + k / rate, and a user cap drops what it cannot start")
    func arrivalsAndCap() async throws {
        // 10 arrivals/s, each flow takes 950 ms, at most 5 users alive: half the arrivals find the cap reached.
        let transport = SimulatedTransport(clock: clock) { _, _ in ServiceReply(HTTPResponse(status: 200), after: .milliseconds(950)) }
        let runner = Runner(
            plan: .open(rate: 10, duration: .seconds(10), maxUsers: 5), flows: [SingleRequestFlow()],
            transport: transport, endpoint: endpoint, clock: clock)
        let outcome = await clock.drive(runner.control) { await runner.run() }
        #expect(outcome.generator.due == 100)
        #expect(outcome.generator.droppedAtCap == 50)
        #expect(outcome.generator.started == 50)
        #expect(outcome.iterations == 50)
        #expect(!outcome.generator.keptSchedule)
        #expect(outcome.generator.problems.first?.contains("50 at the maxUsers cap") == true, "\(outcome.generator.problems)")
        #expect(try flowSummary(outcome).p99Micros == 950_000)
    }

    @Test("a 2 s generator stall at 50 arrivals/s drops the arrivals over a second late and times the rest from when they were due")
    func generatorStall() async throws {
        let start = clock.now
        let clock = self.clock
        let transport = SimulatedTransport(clock: clock) { _, _ in ServiceReply(HTTPResponse(status: 200), after: .milliseconds(10)) }
        // The scheduler cannot start anyone from 10 s to 12 s.
        let hooks = RunHooks { _, due in
            if due >= .seconds(10) && due < .seconds(12) { try? await clock.sleep(until: start.advanced(by: .seconds(12))) }
        }
        let runner = Runner(
            plan: .open(rate: 50, duration: .seconds(30)), flows: [SingleRequestFlow()], transport: transport,
            endpoint: endpoint, clock: clock, hooks: hooks)
        let outcome = await clock.drive(runner.control) { await runner.run() }

        let generator = outcome.generator
        #expect(generator.due == 1500)
        // Due 10.00–10.98 s: more than generator.dropAfter (1 s) late at 12 s. Due 11.00–11.98 s: started late.
        #expect(generator.droppedLate == 50)
        #expect(generator.started == 1450)
        #expect(generator.lagMaxMicros >= 2_000_000 - 1_000)
        #expect(generator.lagP99Micros > 100_000)
        #expect(!generator.keptSchedule)
        #expect(generator.problems.count == 2, "\(generator.problems)")
        let flow = try flowSummary(outcome)
        #expect(flow.maxMicros >= 1_010_000, "the latest started arrival waited 1 s before its 10 ms request")
        // The time series shows when: everything due in 10–11 s dropped, 11–12 s started up to 1 s late.
        let rows = outcome.measured.timeseries
        #expect(rows.first { $0.index == 10 }?.droppedArrivals == 50)
        let late = try #require(rows.first { $0.index == 11 })
        #expect(late.droppedArrivals == 0)
        #expect(late.maxScheduleLagMicros == 1_000_000)
        #expect(
            rows.filter { ![10, 11].contains($0.index) }.allSatisfy {
                ($0.droppedArrivals ?? 0) == 0 && ($0.maxScheduleLagMicros ?? 0) <= 1
            })
    }

    @Test("arrivals due while the generator's thread is saturated are dropped as such, and the verdict names the generator")
    func saturatedGenerator() async throws {
        let start = clock.now
        // 50 arrivals/s for 10 s; the thread that carries the users has no idle time from 3 s to 5 s.
        let transport = SaturatingTransport(
            base: SimulatedTransport(clock: clock) { _, _ in ServiceReply(HTTPResponse(status: 200), after: .milliseconds(10)) },
            clock: clock, saturated: start.advanced(by: .seconds(3))..<start.advanced(by: .seconds(5)))
        let runner = Runner(
            plan: .open(rate: 50, duration: .seconds(10)), flows: [SingleRequestFlow()], transport: transport, endpoint: endpoint,
            clock: clock)
        let outcome = await clock.drive(runner.control) { await runner.run() }

        let generator = outcome.generator
        #expect(generator.due == 500)
        #expect(generator.droppedSaturated == 100)
        #expect(generator.droppedAtCap == 0 && generator.droppedLate == 0)
        #expect(generator.started == 400 && outcome.iterations == 400)
        #expect(!generator.keptSchedule)
        #expect(
            generator.problems == [
                "100 of 500 arrivals dropped (20.00%: 0 at the maxUsers cap, 0 late, 100 while the generator's event loops were "
                    + "saturated: the generator is the limit; lower the rate or run more shards) exceeds generator.maxDroppedRate 1.00%"
            ], "\(generator.problems)")
        // The time series shows when: the two saturated seconds, and no lag on what did start.
        let rows = outcome.measured.timeseries
        #expect(rows.filter { ($0.droppedArrivals ?? 0) > 0 }.map(\.index) == [3, 4])
        #expect(rows.first { $0.index == 3 }?.droppedArrivals == 50)
        #expect(generator.lagMaxMicros <= 1)
    }

    @Test("a result.json written before saturated drops were counted reads them as 0, and a new one reads back equal")
    func generatorReportWithoutSaturatedDrops() throws {
        let report = GeneratorReport(
            model: "open", started: 90, droppedAtCap: 4, droppedLate: 3, droppedSaturated: 2, lagSamples: 0,
            lagHistogram: Histogram().serialized(), lagP50Micros: 0, lagP99Micros: 0, lagMaxMicros: 0, maxLagP99Micros: 100_000,
            maxDroppedRate: 0.01, dropAfterMicros: 1_000_000)
        let data = try JSONEncoder().encode(report)
        #expect(try JSONDecoder().decode(GeneratorReport.self, from: data) == report)

        var older = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(older.removeValue(forKey: "droppedSaturated") as? Int == 2)
        let read = try JSONDecoder().decode(GeneratorReport.self, from: try JSONSerialization.data(withJSONObject: older))
        #expect(read.droppedSaturated == 0)
        #expect(read.dropped == 7 && read.droppedAtCap == 4 && read.droppedLate == 3)
    }
}

/// A simulated transport whose users' thread is saturated for a span of virtual time.
private struct SaturatingTransport: Transport {
    let base: SimulatedTransport<ManualClock>
    let clock: ManualClock
    let saturated: Range<ManualClock.Instant>

    func makeClient(for endpoint: Endpoint) -> any HTTPClient { base.makeClient(for: endpoint) }

    func isSaturated(forUser user: Int) -> Bool { saturated.contains(clock.now) }
}
