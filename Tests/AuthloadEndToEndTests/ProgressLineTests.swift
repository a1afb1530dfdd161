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
        #expect(ProgressReporter<ContinuousClock>.time(run: run, of: .seconds(86_400), wall: wall) == expected)
    }
}
