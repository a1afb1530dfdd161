import AuthloadCore
import AuthloadStaging
import AuthloadTesting
import Testing

@Suite("Fault injection in the staging server", .timeLimit(.minutes(1)))
struct FaultInjectionTests {
    func options(_ json: String) throws(ProfileError) -> StagingConfiguration {
        let value = (try? JSONValue.parse(json)) ?? .null
        return try StagingConfiguration.read(ProfileReader(path: "target.embedded", value: value))
    }

    @Test("each fault is drawn at its rate, only on the paths named")
    func shares() throws {
        let configuration = try options(#"{"faults": {"reset": 0.1, "trickle": 0.2, "paths": ["/health"]}}"#)
        let server = StagingServer(configuration: configuration)
        var counts: [WireFault?: Int] = [:]
        for _ in 0..<20_000 {
            counts[server.respond(to: HTTPRequest(method: "GET", target: "/health")).fault, default: 0] += 1
        }
        #expect(abs(Double(counts[.reset] ?? 0) / 20_000 - 0.1) < 0.01)
        #expect(abs(Double(counts[.trickle] ?? 0) / 20_000 - 0.2) < 0.01)
        #expect(counts.keys.allSatisfy { $0 == nil || $0 == .reset || $0 == .trickle })
        #expect(
            (0..<1000).allSatisfy { _ in server.respond(to: HTTPRequest(method: "GET", target: "/csdk-sample/SDK/login")).fault == nil })
    }

    @Test("a fault that leaves the client waiting ends at its timeout; the others where the answer would have come")
    func inProcess() async throws {
        let clock = ManualClock()
        for fault in [WireFault.noResponse, .malformedStatus] {
            let configuration = try options(#"{"faults": {"\#(fault.rawValue)": 1}}"#)
            let client = InProcessHost(clock: clock, service: StagingServer(configuration: configuration))
                .makeClient(for: Endpoint(host: "staging", port: 80))
            let start = clock.now
            do {
                _ = try await client.execute(HTTPRequest(method: "GET", target: "/health"), timeout: .seconds(2))
                Issue.record("\(fault) should have failed the request")
            } catch let error as TransportError {
                #expect(error == fault.clientError)
                #expect(Outcome(error) == fault.expectedOutcome)
            }
            #expect(start.duration(to: clock.now) == (fault == .noResponse ? .seconds(2) : .zero))
        }
    }

    @Test(
        "bad fault options name the field",
        arguments: [
            (#"{"faults": {"rst": 0.1}}"#, "target.embedded.faults.rst: unknown field"),
            (
                #"{"faults": {"reset": 0.6, "trickle": 0.5}}"#,
                "target.embedded.faults: the request faults add up to 1.1; together they must not pass 1"
            ),
            (#"{"faults": {"paths": ["health"]}}"#, "target.embedded.faults.paths[0]: must start with '/'")
        ])
    func badOptions(json: String, expected: String) {
        do {
            _ = try options(json)
            Issue.record("expected: \(expected)")
        } catch {
            #expect(error.description.hasPrefix(expected), "\(error)")
        }
    }
}
