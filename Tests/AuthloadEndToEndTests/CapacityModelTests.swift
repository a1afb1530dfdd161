import AuthloadCore
import AuthloadStaging
import AuthloadTesting
import Testing

@Suite("The staging server's capacity model")
struct CapacityModelTests {
    @Test("16 simultaneous requests on 8 workers of 10 ms: half are served at once, half wait one service time")
    func workersServeInTurn() {
        var model = CapacityModel(options: .init(workers: 8, queue: 100))
        let admissions = (0..<16).map { _ in model.admit(now: .zero, serviceTime: .milliseconds(10)) }
        #expect(admissions.prefix(8).allSatisfy { $0 == .serve(after: .milliseconds(10), waited: .zero) })
        #expect(admissions.suffix(8).allSatisfy { $0 == .serve(after: .milliseconds(20), waited: .milliseconds(10)) })
        #expect(model.queued == 8)
        // At 10 ms the waiting eight have started; a newcomer waits for the first of them to finish.
        #expect(
            model.admit(now: .milliseconds(10), serviceTime: .milliseconds(10))
                == .serve(after: .milliseconds(20), waited: .milliseconds(10)))
        #expect(model.queued == 1)
    }

    @Test("a full queue rejects at once, and takes requests again once it has drained")
    func fullQueueRejects() {
        var model = CapacityModel(options: .init(workers: 1, queue: 2))
        #expect(model.admit(now: .zero, serviceTime: .milliseconds(10)) == .serve(after: .milliseconds(10), waited: .zero))
        #expect(model.admit(now: .zero, serviceTime: .milliseconds(10)) == .serve(after: .milliseconds(20), waited: .milliseconds(10)))
        #expect(model.admit(now: .zero, serviceTime: .milliseconds(10)) == .serve(after: .milliseconds(30), waited: .milliseconds(20)))
        #expect(model.admit(now: .zero, serviceTime: .milliseconds(10)) == .reject)
        #expect(
            model.admit(now: .milliseconds(25), serviceTime: .milliseconds(10))
                == .serve(after: .milliseconds(15), waited: .milliseconds(5)))
    }

    @Test("at exactly its capacity (800/s on 8 workers of 10 ms) nobody waits; 10 % more builds a queue that grows")
    func saturation() {
        func waits(rate: Int, seconds: Int) -> [Duration] {
            var model = CapacityModel(options: .init(workers: 8, queue: 100_000))
            return (0..<(rate * seconds)).map { k in
                guard
                    case .serve(_, let waited) = model.admit(
                        now: .microseconds(Int64(k) * 1_000_000 / Int64(rate)),
                        serviceTime: .milliseconds(10))
                else { return .seconds(-1) }
                return waited
            }
        }
        #expect(waits(rate: 800, seconds: 5).allSatisfy { $0 == .zero })
        let over = waits(rate: 880, seconds: 5)
        #expect(over.last! > .milliseconds(400), "80 extra requests/s for 5 s wait half a second by the end")
    }

    @Test("the embedded server reads its capacity and answers 503 when saturated, on the injected clock")
    func configuredServer() throws {
        let json = try JSONValue.parse(#"{"fcsdk": {"latency": "10ms"}, "capacity": {"workers": 1, "queue": 0}}"#)
        let configuration = try StagingConfiguration.read(ProfileReader(path: "target.embedded", value: json))
        #expect(configuration.capacity == CapacityModel.Options(workers: 1, queue: 0))
        let clock = ManualClock()
        let service = StagingServer.service(configuration: configuration, clock: clock)
        let login = HTTPRequest(
            method: "POST", target: "/csdk-sample/SDK/login", body: Array(#"{"username": "u", "password": "demo-password"}"#.utf8))
        let first = service.respond(to: login)
        #expect(first.latency == .milliseconds(10))
        let second = service.respond(to: login)
        #expect(try second.result.get().status == 503, "the only worker is busy and there is no queue")
        #expect(second.latency == .zero, "a rejection is immediate")
        clock.advance(by: .milliseconds(10))
        #expect(try service.respond(to: login).result.get().status == 200)
    }

    @Test(
        "a bad capacity names its field",
        arguments: [
            (#"{"capacity": {"queue": 5}}"#, "target.embedded.capacity.workers: is required"),
            (#"{"capacity": {"workers": 0}}"#, "target.embedded.capacity.workers: must be greater than 0, found 0"),
            (#"{"capacity": {"workers": 2, "queue": -1}}"#, "target.embedded.capacity.queue: must be 0 or more requests, found -1"),
            (
                #"{"capacity": {"workers": 2, "serviceTime": "fast"}}"#,
                "target.embedded.capacity.serviceTime: \"fast\" is not a duration (write e.g. 250ms, 30s, 2m, 1h)"
            ),
            (
                #"{"capacity": {"workers": 2, "threads": 4}}"#,
                "target.embedded.capacity.threads: unknown field (expected one of: queue, serviceTime, workers)"
            )
        ])
    func badCapacity(json: String, expected: String) throws {
        let value = try JSONValue.parse(json)
        do {
            _ = try StagingConfiguration.read(ProfileReader(path: "target.embedded", value: value))
            Issue.record("expected an error")
        } catch {
            #expect(error.description == expected)
        }
    }
}
