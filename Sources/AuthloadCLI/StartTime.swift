import AuthloadCore
import Foundation

/// When a shard starts (`--start-at`): every shard of a run waits for the same wall-clock instant, so their
/// intervals line up and their time series merge row by row.
public enum StartTime {
    public static let expected = "expected an RFC 3339 UTC time such as 2026-11-24T02:00:00Z, or an offset from now such as +30s"

    /// The instant `text` names: `2026-11-24T02:00:00Z` (fractions of a second allowed) or `+30s` from `now`.
    public static func parse(_ text: String, now: Date) -> Date? {
        if text.hasPrefix("+") {
            return DurationText.parse(String(text.dropFirst())).map { now.addingTimeInterval($0.seconds) }
        }
        guard text.hasSuffix("Z") else { return nil }
        let formatter = ISO8601DateFormatter()
        if let date = formatter.date(from: text) { return date }
        formatter.formatOptions.insert(.withFractionalSeconds)
        return formatter.date(from: text)
    }

    /// The shard named by a Kubernetes Indexed Job (`JOB_COMPLETION_INDEX`) and `AUTHLOAD_SHARD_COUNT`.
    static func shard(fromEnvironment environment: [String: String]) throws(CLIError) -> Shard {
        guard let indexText = environment["JOB_COMPLETION_INDEX"], let index = Int(indexText) else {
            throw CLIError.usage(
                "--shard-from-env: JOB_COMPLETION_INDEX is not set to a number (a Kubernetes Indexed Job sets it)", command: "run")
        }
        guard let countText = environment["AUTHLOAD_SHARD_COUNT"], let count = Int(countText) else {
            throw CLIError.usage("--shard-from-env: AUTHLOAD_SHARD_COUNT is not set to the number of shards", command: "run")
        }
        guard let shard = Shard(index: index, count: count) else {
            throw CLIError.usage("--shard-from-env: index \(index) is not a shard of \(count) (0 ≤ index < count)", command: "run")
        }
        return shard
    }
}
