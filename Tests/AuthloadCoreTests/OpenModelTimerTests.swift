import AuthloadCore
import AuthloadTesting
import Testing

@Suite("Open-model generator pausing on its thread's timers", .timeLimit(.minutes(1)))
struct OpenModelTimerTests {
    let endpoint = Endpoint(host: "127.0.0.1", port: 1)

    /// One run of `rate` arrivals/s for `duration` with 10 ms flows, its generator pausing on `timer` when given.
    func run(rate: Double, duration: Duration, timer: CountingTimer?) async -> RunOutcome {
        let clock = timer?.clock ?? ManualClock()
        let transport = TimedTransport(
            base: SimulatedTransport(clock: clock) { _, _ in ServiceReply(HTTPResponse(status: 200), after: .milliseconds(10)) },
            timer: timer)
        let runner = Runner(
            plan: .open(rate: rate, duration: duration), flows: [SingleRequestFlow()], transport: transport, endpoint: endpoint,
            clock: clock)
        return await clock.drive(runner.control) { await runner.run() }
    }

    @Test("pausing on the thread's timers starts the same arrivals at the same instants as sleeping on the clock")
    func sameArrivals() async throws {
        let timer = CountingTimer(clock: ManualClock())
        let paused = await run(rate: 5_000, duration: .seconds(2), timer: timer)
        let slept = await run(rate: 5_000, duration: .seconds(2), timer: nil)

        #expect(paused.generator.started == 10_000 && paused.generator.dropped == 0)
        #expect(paused.iterations == slept.iterations)
        #expect(paused.generator.lagMaxMicros == slept.generator.lagMaxMicros)
        #expect(paused.generator.lagP99Micros == slept.generator.lagP99Micros)
        // Every interval started as many arrivals, as late, and timed its flows alike.
        #expect(paused.measured.timeseries == slept.measured.timeseries)
        // One pause a millisecond, none longer: the generator kept its batches.
        let pauses = timer.pauses.withLock { $0 }
        #expect((1_990...2_000).contains(pauses.count), "\(pauses.count) pauses")
        #expect(pauses.allSatisfy { $0 > .zero && $0 <= .milliseconds(1) })
    }

    @Test("at 1 arrival a second the generator sleeps on the clock, where a stop request reaches it, not on the timers")
    func longWaitsSleepOnTheClock() async throws {
        let timer = CountingTimer(clock: ManualClock())
        let outcome = await run(rate: 1, duration: .seconds(10), timer: timer)
        #expect(outcome.generator.started == 10)
        #expect(timer.pauses.withLock { $0 }.isEmpty)
    }

    @Test("a stop request ends a run whose generator pauses on the timers, with no arrival started after it")
    func stopRequest() async throws {
        let clock = ManualClock()
        let start = clock.now
        let timer = CountingTimer(clock: clock)
        let transport = TimedTransport(
            base: SimulatedTransport(clock: clock) { _, _ in ServiceReply(HTTPResponse(status: 200), after: .milliseconds(10)) },
            timer: timer)
        let runner = Runner(
            plan: .open(rate: 2_000, duration: .seconds(10)), flows: [SingleRequestFlow()], transport: transport,
            endpoint: endpoint, clock: clock)
        // Stop when the clock reaches 1 s: the arrivals due from then on are never started.
        timer.onPause = { now in if now >= start.advanced(by: .seconds(1)) { runner.control.requestStop() } }
        let outcome = await clock.drive(runner.control) { await runner.run() }
        #expect(outcome.stoppedEarly)
        #expect((2_000...2_002).contains(outcome.generator.started), "\(outcome.generator.started) started")
    }
}

/// Pauses on a manual clock, and notes every pause it is asked for.
final class CountingTimer: LoopTimer, @unchecked Sendable {
    let clock: ManualClock
    let pauses = Locked<[Duration]>([])
    /// Called with the clock's reading before each pause; set before the run starts, read-only after.
    var onPause: (@Sendable (ManualClock.Instant) -> Void)?

    init(clock: ManualClock) { self.clock = clock }

    func pause(for delay: Duration, isolation: isolated (any Actor)?) async {
        pauses.withLock { $0.append(delay) }
        onPause?(clock.now)
        try? await clock.sleep(for: delay)
    }
}

/// A simulated transport that offers `timer` as its users' thread's timers.
private struct TimedTransport: Transport {
    let base: SimulatedTransport<ManualClock>
    let timer: CountingTimer?

    func makeClient(for endpoint: Endpoint) -> any HTTPClient { base.makeClient(for: endpoint) }

    func timer(forUser user: Int) -> (any LoopTimer)? { timer }
}
