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
