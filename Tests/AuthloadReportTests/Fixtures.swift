import AuthloadCore
import Testing

/// Hand-built runs whose every figure the tests can predict.
enum Fixtures {
    static let tricky = #"missing "sessionid", rtCode=7"#

    static func histogram(_ micros: [Int]) -> String {
        var h = Histogram()
        for value in micros { h.record(value) }
        return h.serialized()
    }

    static func summary(_ flow: String, _ step: String?, count: Int, errors: Int, base: Int) -> MetricSummary {
        MetricSummary(
            id: MetricID(flow: flow, step: step), count: count, errors: errors,
            histogram: histogram((1...count).map { base + $0 * 10 }),
            minMicros: base, meanMicros: Double(base) * 1.5 + 0.4, maxMicros: base * 4,
            p50Micros: base + 234, p90Micros: base * 2, p95Micros: base * 2 + 5, p99Micros: base * 3,
            p999Micros: base * 3 + 999, httpRequests: step == nil ? count * 2 : nil
        )
    }

    /// A series whose successful and failed samples are also given apart.
    static func split(_ summary: MetricSummary, ok: [Int], failed: [Int]) -> MetricSummary {
        var summary = summary
        var okHistogram = Histogram()
        var failedHistogram = Histogram()
        for value in ok { okHistogram.record(value) }
        for value in failed { failedHistogram.record(value) }
        summary.successful = LatencyFigures(okHistogram)
        summary.failed = LatencyFigures(failedHistogram)
        return summary
    }

    static func interval(_ index: Int, users: Int, _ metrics: [IntervalMetric]) -> IntervalRow {
        IntervalRow(index: index, startSeconds: Double(index) * 2, activeUsers: users, metrics: metrics)
    }

    static func metric(_ flow: String, _ step: String?, count: Int, errors: Int = 0, p50: Int = 1_500) -> IntervalMetric {
        IntervalMetric(
            id: MetricID(flow: flow, step: step), count: count, errors: errors,
            p50Micros: p50, p90Micros: p50 * 2, p99Micros: p50 * 3, maxMicros: p50 * 4)
    }

    /// Two flows (login with two steps, mfa with one), five 2-second intervals (the fourth empty),
    /// two error kinds.
    static func run(
        name: String = "staging-nightly", status: RunStatus = .completed,
        notes: [String] = ["TLS verification was off."]
    ) -> RunResult {
        RunResult(
            profileName: name,
            environment: RunEnvironment(
                authloadVersion: "0.1.0", hostname: "ci-runner-7", cores: 2,
                target: "https://auth.staging.example.com"),
            startedAt: "2025-01-01T02:00:00Z", endedAt: "2025-01-01T02:00:10Z",
            durationSeconds: 10, intervalSeconds: 2, status: status,
            metrics: [
                split(
                    summary("login", nil, count: 100, errors: 3, base: 1_000), ok: (1...97).map { $0 * 10 }, failed: [2_000, 2_500, 3_000]),
                summary("login", "authenticate", count: 100, errors: 2, base: 600),
                summary("login", "logout", count: 97, errors: 1, base: 300),
                summary("mfa", nil, count: 40, errors: 0, base: 2_000),
                summary("mfa", "verify", count: 40, errors: 0, base: 1_900)
            ],
            timeseries: [
                interval(
                    0, users: 5,
                    [
                        metric("login", nil, count: 20), metric("login", "authenticate", count: 20),
                        metric("login", "logout", count: 19, errors: 1)
                    ]),
                interval(
                    1, users: 10,
                    [
                        metric("login", nil, count: 30, errors: 2, p50: 2_000),
                        metric("login", "authenticate", count: 30, errors: 2),
                        metric("login", "logout", count: 30), metric("mfa", nil, count: 15),
                        metric("mfa", "verify", count: 15)
                    ]),
                interval(
                    2, users: 10,
                    [
                        metric("login", nil, count: 50, errors: 1),
                        metric("login", "authenticate", count: 50),
                        metric("login", "logout", count: 48), metric("mfa", nil, count: 25),
                        metric("mfa", "verify", count: 25)
                    ]),
                interval(3, users: 8, []),
                interval(4, users: 0, [metric("login", "logout", count: 0)])
            ],
            errors: [
                ErrorCount(id: MetricID(flow: "login", step: "authenticate"), kind: .httpError, detail: "503", count: 2),
                ErrorCount(id: MetricID(flow: "login", step: "logout"), kind: .protocolError, detail: tricky, count: 1)
            ],
            notes: notes
        )
    }

    /// The mixed profile's flows and steps, every cell at its widest: six-figure counts, double-digit error
    /// rates, a held session's 30 s latencies beside sub-millisecond steps, OK and KO figures apart.
    static func mixed() -> RunResult {
        let flows: [(String, [String])] = [
            ("login", ["login", "logout"]),
            (
                "mfa",
                ["interact", "introspect", "identify", "password", "select-authenticator", "answer", "skip", "token", "retry", "restart"]
            ),
            (
                "gccs",
                [
                    "auth", "connect", "nodes", "CreateChannel", "CreateChannel gap", "SelectNodes", "SelectNodes gap",
                    "StartVerificationOfNodes", "StartVerificationOfNodes gap", "CompleteVerificationOfNodes",
                    "CompleteVerificationOfNodes gap", "complete", "AuthCompleted", "AuthCompleted gap", "token", "cancel",
                    "AuthCanceled", "AuthCanceled gap", "disconnect", "duplicate status", "missing status"
                ]
            ),
            ("streem", ["redeem", "call", "refresh", "logout", "expired", "relogin", "session-ended"]),
            ("streem-openid", ["openid-configuration", "token", "exchange", "call", "refresh", "logout", "expired", "relogin"])
        ]
        var result = run(name: "mixed")
        result.metrics = flows.flatMap { flow, steps in
            ([nil] + steps.map(Optional.some)).map { step in
                var summary = split(
                    Fixtures.summary(flow, step, count: 123_456, errors: 12_345, base: 30_005_000),
                    ok: [30_005_000, 120_020_000], failed: [30_005_000, 120_020_000])
                summary.event = step.map { $0.first!.isUppercase || $0.contains(" ") || $0 == "expired" || $0 == "relogin" }
                summary.httpRequests = step == nil ? 1_234_567 : nil
                return summary
            }
        }
        return result
    }

    /// The shapes that tend to produce NaN or infinity in charts.
    enum Edge: String, CaseIterable, CustomTestStringConvertible {
        case emptyTimeseries = "empty time series"
        case oneInterval = "one interval"
        case allZeroLatencies = "all-zero latencies"
        case nothingAtAll = "no metrics, intervals or errors"
        case zeroDuration = "zero duration and interval"

        var testDescription: String { rawValue }

        var result: RunResult {
            var r = Fixtures.run()
            switch self {
            case .emptyTimeseries:
                r.timeseries = []
            case .oneInterval:
                r.timeseries = [r.timeseries[1]]
            case .allZeroLatencies:
                r.metrics = r.metrics.map { m in
                    var m = m
                    (m.minMicros, m.meanMicros, m.maxMicros) = (0, 0, 0)
                    (m.p50Micros, m.p90Micros, m.p95Micros, m.p99Micros, m.p999Micros) = (0, 0, 0, 0, 0)
                    m.histogram = Fixtures.histogram(Array(repeating: 0, count: max(1, m.count)))
                    return m
                }
                r.timeseries = r.timeseries.map { row in
                    var row = row
                    row.activeUsers = 0
                    row.metrics = row.metrics.map { Fixtures.metric($0.id.flow, $0.id.step, count: 0, p50: 0) }
                    return row
                }
            case .nothingAtAll:
                r.metrics = []
                r.timeseries = []
                r.errors = []
            case .zeroDuration:
                r.durationSeconds = 0
                r.intervalSeconds = 0
            }
            return r
        }
    }
}
