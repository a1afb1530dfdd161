import AuthloadCore
import Testing

@testable import AuthloadCLI

/// The opening of the progress line: how far the run is and, in a simulation, how much faster than the wall clock.
@Suite("Progress line")
struct ProgressLineTests {
    @Test(
        "a simulation says its virtual time and its ratio to wall time; a real run says only its time",
        arguments: [
            (Duration.seconds(3600), Duration.seconds(60) as Duration?, "[1h/24h] (virtual, ×60)"),
            (.seconds(86_400), .milliseconds(57_600), "[24h/24h] (virtual, ×1,500)"),
            (.seconds(90), .seconds(120), "[1m30s/24h] (virtual, ×1)"),
            (.seconds(5), .zero, "[5s/24h]"),
            (.seconds(600), nil, "[10m/24h]")
        ])
    func ratio(run: Duration, wall: Duration?, expected: String) {
        #expect(ProgressReporter.time(run: run, of: .seconds(86_400), wall: wall) == expected)
    }
}

/// One line for the shards of a simulation on threads.
@Suite("Progress of shards")
struct ShardProgressTests {
    private func shard(elapsed: Int, users: Int, rate: Double, p95: Int, errors: Int, attempts: Int, stopping: Bool = false)
        -> ProgressFigures
    {
        var figures = ProgressFigures()
        figures.elapsed = .seconds(elapsed)
        figures.activeUsers = users
        figures.dropped = users / 10
        figures.requestsPerSecond = rate
        figures.p95Micros = p95
        figures.errors = errors
        figures.attempts = attempts
        figures.stopping = stopping
        return figures
    }

    @Test("counts and rates add up, the time is the shard furthest behind, the p95 is bounded by the slowest shard's")
    func combined() {
        let both = ProgressFigures(combining: [
            shard(elapsed: 3_700, users: 1_000, rate: 40.5, p95: 12_000, errors: 3, attempts: 900),
            shard(elapsed: 3_600, users: 990, rate: 39.5, p95: 15_000, errors: 1, attempts: 880, stopping: true)
        ])
        #expect(both.elapsed == .seconds(3_600))
        #expect(both.activeUsers == 1_990)
        #expect(both.dropped == 199)
        #expect(both.requestsPerSecond == 80)
        #expect(both.p95Micros == 15_000 && both.p95IsBound)
        #expect(both.errors == 4 && both.attempts == 1_780)
        #expect(both.stopping)
        #expect(ProgressFigures(combining: []) == ProgressFigures())
        let one = ProgressFigures(combining: [shard(elapsed: 5, users: 2, rate: 1, p95: 1_000, errors: 0, attempts: 4)])
        #expect(!one.p95IsBound)
    }

    @Test("the board shows the shards that have started, in shard order")
    func board() {
        let board = SimulationShards()
        #expect(board.figures.isEmpty)
        board.show(1) { self.shard(elapsed: 20, users: 5, rate: 0, p95: 0, errors: 0, attempts: 0) }
        board.show(0) { self.shard(elapsed: 10, users: 7, rate: 0, p95: 0, errors: 0, attempts: 0) }
        #expect(board.figures.map(\.activeUsers) == [7, 5])
    }

    @Test("a simulation's line of shards says the p95 is a bound")
    func line() throws {
        let plan = try Profile.parse(
            #"{"name": "p", "target": {"embedded": {}}, "load": {"users": 2000, "duration": "24h"}, "flows": [{"name": "login", "kind": "fcsdk-login"}]}"#,
            fileName: "p.json")
        let reporter = ProgressReporter(console: Console(out: { _ in }, err: { _ in }, isTerminal: false), plan: plan, simulated: true) {
            ProgressFigures()
        }
        let figures = ProgressFigures(combining: [
            shard(elapsed: 3_600, users: 1_000, rate: 40, p95: 12_000, errors: 1, attempts: 100),
            shard(elapsed: 3_700, users: 990, rate: 41, p95: 15_000, errors: 0, attempts: 100)
        ])
        #expect(
            reporter.line(figures, wall: .seconds(60))
                == "[1h/24h] (virtual, ×60) users 1990/2000  req/s 81  p95 ≤ 15.0 ms  errors 1 (0.50%)")
    }
}
