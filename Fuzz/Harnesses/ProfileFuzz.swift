// libFuzzer target for the profile parser: JSONValue.parse, Profile.parse, DurationText, CSVTable and
// UserFeeder templates, which a profile brings along.
//
// Input: the profile's text; after a NUL, the text of the CSV file any `users.csv` names.
// Invariants beyond "does not crash":
// - JSON that parses serializes to JSON that parses to the same value, and serializes the same again;
// - a rejected profile gives one ProfileError on one line, with no control characters;
// - an accepted profile's plan serves the identities of its first and last user, its durations print
//   as text that parses back to them, and its source, serialized, parses to the same plan.
import AuthloadCore

private func checkDuration(_ duration: Duration, _ field: String) {
    let text = DurationText.format(duration)
    require(
        DurationText.parse(text) == duration,
        "\(field) \(duration) prints as \(text.debugDescription), which parses to \(String(describing: DurationText.parse(text)))")
}

private func checkJSON(_ bytes: ArraySlice<UInt8>) {
    guard let value = try? JSONValue.parse(bytes) else { return }
    let serialized = value.serialized()
    do {
        let again = try JSONValue.parse(serialized)
        require(again == value, "\(value) serialized as \(value.serializedString) parses to \(again)")
        require(again.serialized() == serialized, "serialization of \(value) is not stable")
    } catch {
        require(false, "\(value) serialized as \(value.serializedString) does not parse: \(error)")
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzProfile(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    let nul = bytes.firstIndex(of: 0) ?? bytes.count
    let profileBytes = bytes[..<nul]
    let csv = nul < bytes.count ? String(decoding: bytes[(nul + 1)...], as: UTF8.self) : nil
    let text = String(decoding: profileBytes, as: UTF8.self)

    checkJSON(profileBytes)
    if let duration = DurationText.parse(text) { checkDuration(duration, "text") }

    let plan: RunPlan
    do {
        plan = try Profile.parse(text, fileName: "fuzz.json", readFile: { _ in csv })
    } catch {
        let controls = error.description.unicodeScalars.filter {
            [.control, .lineSeparator, .paragraphSeparator].contains($0.properties.generalCategory)
        }
        require(controls.isEmpty, "error with control characters or on more than one line: \(error.description.debugDescription)")
        return 0
    }

    let users = plan.load.users
    require(users > 0, "plan with \(users) users")
    _ = plan.users.identity(for: 0)
    if let capacity = plan.users.capacity {
        if capacity > 0 { _ = plan.users.identity(for: min(users, capacity) - 1) }
    } else {
        _ = plan.users.identity(for: users - 1)
    }

    checkDuration(plan.load.duration, "load.duration")
    checkDuration(plan.load.rampUp, "load.rampUp")
    checkDuration(plan.load.thinkTime.min, "load.thinkTime.min")
    checkDuration(plan.load.thinkTime.max, "load.thinkTime.max")
    checkDuration(plan.load.gracefulStop, "load.gracefulStop")
    checkDuration(plan.timeouts.step, "timeouts.step")
    checkDuration(plan.timeouts.flow, "timeouts.flow")
    checkDuration(plan.connections.connectTimeout, "timeouts.connect")
    checkDuration(plan.interval, "metrics.interval")

    do {
        let again = try Profile.parse(plan.source.serializedString, fileName: "fuzz.json", readFile: { _ in csv })
        require(
            again.name == plan.name && again.load == plan.load && again.timeouts == plan.timeouts
                && again.connections == plan.connections && again.seed == plan.seed && again.interval == plan.interval
                && again.users == plan.users && again.flows.map(\.name) == plan.flows.map(\.name),
            "the serialized source parses to another plan")
    } catch {
        require(false, "the serialized source of an accepted profile is rejected: \(error)")
    }
    return 0
}
