import AuthloadTesting
import Testing

@testable import AuthloadCore

/// A simulated transport that says it carries users on `threads` threads of its own, as the socket transport does.
private struct ThreadedTransport: Transport {
    let inner: SimulatedTransport<ManualClock>
    let threads: Int?

    func makeClient(for endpoint: Endpoint) -> any HTTPClient { inner.makeClient(for: endpoint) }
    var userThreads: Int? { threads }
}

@Suite("Recording shards follow the transport's threads", .timeLimit(.minutes(1)))
struct RecorderShardTests {
    let clock = ManualClock()

    func runner(threads: Int?) -> Runner<ManualClock> {
        let inner = SimulatedTransport(clock: clock) { _, _ in ServiceReply(HTTPResponse(status: 200), after: .milliseconds(50)) }
        return Runner(
            plan: .closed(users: 6, duration: .seconds(5), think: .milliseconds(900)), flows: [PingFlow()],
            transport: ThreadedTransport(inner: inner, threads: threads), endpoint: Endpoint(host: "127.0.0.1", port: 1),
            clock: clock)
    }

    @Test("one shard per loop thread, so each thread records into its own; every sample still counts")
    func oneShardPerThread() async throws {
        let runner = runner(threads: 3)
        #expect(runner.recorder.shardCount == 3)
        let run = Task { await runner.run() }
        await clock.run(until: clock.now.advanced(by: .seconds(5)), quiet: runner.control)
        let outcome = await run.value
        // Six users, one 100 ms flow of two steps each second (900 ms think) for five seconds: 30 flows.
        #expect(outcome.iterations == 30)
        let flow = try #require(outcome.measured.metrics.first { $0.id == MetricID(flow: "ping", step: nil) })
        let second = try #require(outcome.measured.metrics.first { $0.id.step == "second" })
        #expect(flow.count == 30 && second.count == 30)
        #expect(flow.httpRequests == 60)
    }

    @Test("users on Swift's global pool keep the default shards")
    func globalPool() {
        #expect(runner(threads: nil).recorder.shardCount == 16)
    }
}

@Suite("A shard keeps its newest interval apart from the older ones")
struct ShardSlotsTests {
    /// Samples of metric 0 in each interval of what was taken, in interval order.
    func counts(_ taken: [Int: IntervalSamples]) -> [Int: Int] {
        taken.mapValues { $0.metrics[0]?.count ?? 0 }
    }

    @Test("late samples land in their own older interval and never displace the newest; taking empties the shard")
    func lateSamples() {
        var slots = ShardSlots()
        let intervals = [0, 1, 1, 0, 2, 0, 2, 1, 2]
        for index in intervals {
            slots.update(index, metricCount: 2) { $0.record(metric: 0, latencyMicros: 100, outcome: .ok) }
        }
        slots.update(2, metricCount: 2) { $0.countRequest(metric: 1) }
        let taken = slots.take()
        #expect(counts(taken) == [0: 3, 1: 3, 2: 3])
        #expect(taken[2]?.metrics[1]?.httpRequests == 1)
        #expect(slots.take().isEmpty)

        // After a take, the same interval starts afresh; the collector merges the two parts.
        slots.update(2, metricCount: 2) { $0.record(metric: 0, latencyMicros: 5, outcome: Outcome(.httpError, "500")) }
        let again = slots.take()
        #expect(counts(again) == [2: 1])
        #expect(again[2]?.metrics[0]?.errors == 1)
    }
}
