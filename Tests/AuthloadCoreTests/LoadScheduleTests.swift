import AuthloadCore
import Testing

@Suite("Load schedules and the load section of a profile")
struct LoadScheduleTests {
    @Test("a constant rate puts arrival k at exactly k / rate")
    func constantRate() {
        let schedule = LoadSchedule(constant: 100, duration: .seconds(60))
        #expect(schedule.arrivalOffset(0) == .zero)
        #expect(schedule.arrivalOffset(57) == .milliseconds(570))
        #expect(schedule.arrivalOffset(5999) == .milliseconds(59_990))
        #expect(schedule.arrivalOffset(6000) == nil)
        #expect(schedule.arrivalCount == 6000)
    }

    @Test("a linear ramp of the rate spaces arrivals by the integral of the rate")
    func rampedRate() throws {
        // 0 → 100/s over 10 s: 500 arrivals, arrival k at sqrt(k / 5) s; then 100/s for 10 s: 1000 more.
        let schedule = LoadSchedule(stages: [LoadStage(duration: .seconds(10), target: 100), LoadStage(duration: .seconds(10), target: 100)]
        )
        #expect(schedule.arrivalOffset(125) == .seconds(5))
        #expect(schedule.arrivalOffset(320) == .seconds(8))
        #expect(schedule.arrivalOffset(500) == .seconds(10))
        #expect(schedule.arrivalOffset(550) == .milliseconds(10_500))
        #expect(schedule.arrivalOffset(1499) == .milliseconds(19_990))
        #expect(schedule.arrivalOffset(1500) == nil)
        #expect(schedule.arrivalCount == 1500)
        #expect(schedule.level(at: .seconds(5)) == 50)
    }

    @Test("zero-length stages jump, so steps are stages too")
    func steps() {
        let schedule = LoadSchedule(stages: [
            LoadStage(duration: .zero, target: 100), LoadStage(duration: .seconds(10), target: 100),
            LoadStage(duration: .zero, target: 200), LoadStage(duration: .seconds(10), target: 200)
        ])
        #expect(schedule.level(at: .seconds(9)) == 100)
        #expect(schedule.level(at: .seconds(10)) == 200)
        #expect(schedule.arrivalOffset(1000) == .seconds(10))
        #expect(schedule.arrivalOffset(1001) == .milliseconds(10_005))
        #expect(schedule.duration == .seconds(20))
        #expect(schedule.peak == 200)
    }

    @Test("a user is active from where the level reaches its number until it falls below it")
    func userWindows() {
        // 0 → 10 users over 10 s, hold 10 s, down to 0 over 10 s, back up to 4 over 4 s.
        let schedule = LoadSchedule(stages: [
            LoadStage(duration: .seconds(10), target: 10), LoadStage(duration: .seconds(10), target: 10),
            LoadStage(duration: .seconds(10), target: 0), LoadStage(duration: .seconds(4), target: 4)
        ])
        #expect(schedule.firstOffset(whereLevelReaches: 3, from: .zero) == .seconds(3))
        #expect(schedule.firstOffset(whereLevelReaches: 3, from: .seconds(15)) == .seconds(15))
        #expect(schedule.firstOffset(whereLevelReaches: 3, from: .seconds(28)) == .seconds(33))
        #expect(schedule.firstOffset(whereLevelReaches: 5, from: .seconds(26)) == nil)
    }

    static func profile(_ load: String, extra: String = "") -> String {
        """
        {"name": "demo", "target": {"embedded": {}}, "load": {\(load)}, "flows": [{"name": "login", "kind": "fcsdk-login"}]\(extra)}
        """
    }

    @Test("the open model reads a rate per second or per minute, or stages of rates, and a user cap")
    func openModel() throws {
        let perMinute = try Profile.parse(Self.profile(#""model": "open", "arrivalRate": "600/m", "duration": "1m""#), fileName: "p.json")
        #expect(perMinute.load == .open(rate: 10, duration: .seconds(60)))
        #expect(perMinute.load.users == LoadPlan.defaultMaxUsers)
        #expect(perMinute.generator == GeneratorLimits())
        let staged = try Profile.parse(
            Self.profile(
                #""model": "open", "maxUsers": 50, "stages": [{"duration": "30s", "target": "100/s"}, {"duration": "1m", "target": 100}]"#,
                extra: #", "generator": {"maxLagP99": "50ms", "maxDroppedRate": 0.05, "dropAfter": "500ms"}"#), fileName: "p.json")
        #expect(
            staged.load
                == .open(
                    stages: [LoadStage(duration: .seconds(30), target: 100), LoadStage(duration: .seconds(60), target: 100)], maxUsers: 50))
        #expect(staged.load.duration == .seconds(90))
        #expect(staged.generator == GeneratorLimits(maxLagP99: .milliseconds(50), maxDroppedRate: 0.05, dropAfter: .milliseconds(500)))
    }

    @Test("generator.unreachableAfter is 30 s unless set; 0s turns the verdict off")
    func unreachableAfter() throws {
        let load = #""users": 1, "duration": "1m""#
        #expect(try Profile.parse(Self.profile(load), fileName: "p.json").generator.unreachableAfter == .seconds(30))
        let set = try Profile.parse(Self.profile(load, extra: #", "generator": {"unreachableAfter": "2s"}"#), fileName: "p.json")
        #expect(set.generator.unreachableAfter == .seconds(2))
        let off = try Profile.parse(Self.profile(load, extra: #", "generator": {"unreachableAfter": "0s"}"#), fileName: "p.json")
        #expect(off.generator.unreachableAfter == nil)
    }

    @Test("closed-model stages set the population to their highest target and the length to their sum")
    func closedStages() throws {
        let plan = try Profile.parse(
            Self.profile(#""stages": [{"duration": "1m", "target": 40}, {"duration": "30s", "target": 10}]"#), fileName: "p.json")
        #expect(plan.load.model == .closed)
        #expect(plan.load.users == 40)
        #expect(plan.load.duration == .seconds(90))
        #expect(plan.load.stages.count == 2)
    }

    @Test(
        "a bad load gives one line naming the field",
        arguments: [
            (#""model": "open", "duration": "1m""#, "load: the open model needs arrivalRate (e.g. \"100/s\") or stages"),
            (
                #""model": "open", "arrivalRate": "100/x", "duration": "1m""#,
                "load.arrivalRate: \"100/x\" is not a rate (write e.g. \"100/s\", \"600/m\" or a number per second)"
            ),
            (#""model": "open", "arrivalRate": -3, "duration": "1m""#, "load.arrivalRate: must be from 0 to 1,000,000 per second"),
            (
                #""model": "open", "arrivalRate": "0/m", "duration": "1m""#,
                "load.arrivalRate: must be greater than 0 (a run of no arrivals measures nothing)"
            ),
            (
                #""model": "open", "users": 10, "arrivalRate": 5, "duration": "1m""#,
                "load.users: the open model has no fixed population: arrivals come at arrivalRate; cap them with maxUsers"
            ),
            (
                #""model": "open", "arrivalRate": 5, "duration": "1m", "thinkTime": "1s""#,
                "load.thinkTime: an open-model user runs one flow and leaves, so there is no think time"
            ),
            (#""model": "open", "arrivalRate": 5, "duration": "1m", "maxUsers": 0"#, "load.maxUsers: must be greater than 0, found 0"),
            (
                #""model": "open", "arrivalRate": 5, "stages": [{"duration": "1m", "target": 5}]"#,
                "load: give either arrivalRate or stages, not both"
            ),
            (#""users": 5, "duration": "1m", "maxUsers": 9"#, "load.maxUsers: only the open model (\"model\": \"open\") has maxUsers"),
            (
                #""stages": [{"duration": "1m", "target": 5}], "duration": "1m""#,
                "load.duration: load.stages sets the shape and length; leave duration out"
            ),
            (#""stages": []"#, "load.stages: needs at least one stage"),
            (#""stages": [{"duration": "0s", "target": 5}]"#, "load.stages: needs a stage longer than 0s"),
            (#""stages": [{"duration": "1m", "target": 2.5}]"#, "load.stages[0].target: expected a whole number, found 2.5"),
            (#""stages": [{"duration": "1m", "users": 2}]"#, "load.stages[0].users: unknown field (expected one of: duration, target)"),
            (
                #""stages": [{"duration": "soon", "target": 2}]"#,
                "load.stages[0].duration: \"soon\" is not a duration (write e.g. 250ms, 30s, 2m, 1h)"
            )
        ])
    func badLoad(load: String, expected: String) {
        do {
            _ = try Profile.parse(Self.profile(load), fileName: "p.json")
            Issue.record("expected an error")
        } catch {
            #expect(error.description == expected)
        }
    }

    @Test(
        "a bad generator limit names its field",
        arguments: [
            (#"{"maxLagP99": "0s"}"#, "generator.maxLagP99: must be longer than 0s"),
            (#"{"maxDroppedRate": 2}"#, "generator.maxDroppedRate: must be between 0 and 1, found 2.0"),
            (
                #"{"maxLag": "1s"}"#,
                "generator.maxLag: unknown field (expected one of: dropAfter, maxDroppedRate, maxLagP99, unreachableAfter)"
            )
        ])
    func badGenerator(generator: String, expected: String) {
        do {
            _ = try Profile.parse(
                Self.profile(#""users": 1, "duration": "1m""#, extra: ", \"generator\": \(generator)"), fileName: "p.json")
            Issue.record("expected an error")
        } catch {
            #expect(error.description == expected)
        }
    }
}
