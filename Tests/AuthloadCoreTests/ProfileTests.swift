import AuthloadCore
import Testing

@Suite("Profile parsing and validation")
struct ProfileTests {
    static let valid = """
        {
          "name": "demo",
          "target": {"embedded": {}},
          "load": {"users": 1000, "rampUp": "5s", "duration": "30s", "thinkTime": {"min": "1s", "max": "3s"}},
          "flows": [{"name": "login", "kind": "fcsdk-login"}]
        }
        """

    /// The valid profile with one member of `load` replaced (or removed, for nil).
    static func withLoad(_ key: String, _ value: String?) -> String {
        var load = ["\"users\": 1000", "\"duration\": \"30s\""].filter { !$0.hasPrefix("\"\(key)\"") }
        if let value { load.append("\"\(key)\": \(value)") }
        return """
            {"name": "demo", "target": {"embedded": {}}, "load": {\(load.joined(separator: ", "))},
             "flows": [{"name": "login", "kind": "fcsdk-login"}]}
            """
    }

    @Test("a valid profile becomes a plan with every value resolved")
    func validProfile() throws {
        let plan = try Profile.parse(Self.valid, fileName: "demo.json")
        #expect(plan.name == "demo")
        #expect(
            plan.load
                == LoadPlan(
                    users: 1000, rampUp: .seconds(5), duration: .seconds(30),
                    thinkTime: ThinkTime(min: .seconds(1), max: .seconds(3))))
        #expect(plan.flows.map(\.kind) == ["fcsdk-login"])
        #expect(plan.timeouts == Timeouts())
        #expect(plan.connections == ConnectionSettings(policy: .perUser(idleTimeout: .seconds(30), lifetime: .iteration)))
        guard case .embedded = plan.target else {
            Issue.record("expected an embedded target")
            return
        }
    }

    @Test(
        "each bad profile gives one line naming the field and the problem",
        arguments: [
            (withLoad("users", nil), "load.users: is required"),
            (withLoad("users", "\"ten\""), "load.users: expected a whole number, found a string"),
            (withLoad("users", "-5"), "load.users: must be greater than 0, found -5"),
            (withLoad("users", "0"), "load.users: must be greater than 0, found 0"),
            (withLoad("users", "2.5"), "load.users: expected a whole number, found 2.5"),
            (withLoad("duration", "\"10x\""), "load.duration: \"10x\" is not a duration (write e.g. 250ms, 30s, 2m, 1h)"),
            (withLoad("duration", "30"), "load.duration: expected a string, found a number"),
            (withLoad("rampUp", "\"1m\""), "load.rampUp: must not be longer than load.duration (30s)"),
            (
                withLoad("userz", "3"),
                "load.userz: unknown field (expected one of: arrivalRate, duration, gracefulStop, maxUsers, model, rampUp, stages, thinkTime, users)"
            ),
            (withLoad("model", "\"poisson\""), "load.model: \"poisson\" is not one of: closed, open"),
            (
                "{\"name\": \"demo\", \"target\": {\"embedded\": {}}, \"load\": {\"users\": 1, \"duration\": \"1s\"}, \"flows\": []}",
                "flows: needs at least one flow"
            ),
            (
                "{\"name\": \"demo\", \"load\": {\"users\": 1, \"duration\": \"1s\"}, \"flows\": [{\"name\": \"a\", \"kind\": \"x\"}]}",
                "target: is required"
            ),
            (
                "{\"name\": \"demo\", \"target\": {\"baseURL\": \"ftp://x\"}, \"load\": {\"users\": 1, \"duration\": \"1s\"}, \"flows\": [{\"name\": \"a\", \"kind\": \"x\"}]}",
                "target.baseURL: \"ftp://x\" must start with http:// or https://"
            ),
            (
                "{\"name\": \"demo\", \"target\": {\"baseURL\": \"https://x\", \"insecureSkipTLSVerify\": \"yes\"}, \"load\": {\"users\": 1, \"duration\": \"1s\"}, \"flows\": [{\"name\": \"a\", \"kind\": \"x\"}]}",
                "target.insecureSkipTLSVerify: expected true or false, found a string"
            ),
            (
                "{\"name\": \"demo\", \"target\": {\"embedded\": {}}, \"load\": {\"users\": 1, \"duration\": \"1s\"}, \"flows\": [{\"kind\": \"x\"}]}",
                "flows[0].name: is required"
            ),
            (
                "{\"name\": \"demo\", \"target\": {\"embedded\": {}}, \"load\": {\"users\": 1, \"duration\": \"1s\"}, \"flows\": [{\"name\": \"a\", \"kind\": \"x\", \"weight\": 0}]}",
                "flows[0].weight: must be greater than 0"
            )
        ])
    func badProfile(text: String, expected: String) {
        #expect(throws: ProfileError.self) { try Profile.parse(text, fileName: "demo.json") }
        do {
            _ = try Profile.parse(text, fileName: "demo.json")
        } catch {
            #expect(error.description == expected)
            #expect(!error.description.contains("\n"))
        }
    }

    // Found by Fuzz/run.sh profile: a key holding a line break ("c\nnect") split the error over two lines.
    @Test(
        "writes line breaks and control characters from the profile as escapes, keeping the error on one line",
        arguments: [
            (
                withLoad(#"c\nnect"#, "3"),
                #"load.c\nnect: unknown field (expected one of: arrivalRate, duration, gracefulStop, maxUsers, model, rampUp, stages, thinkTime, users)"#
            ),
            (
                withLoad(#"a\u2028b"#, "3"),
                #"load.a\u{2028}b: unknown field (expected one of: arrivalRate, duration, gracefulStop, maxUsers, model, rampUp, stages, thinkTime, users)"#
            ),
            (
                withLoad("duration", #""5\u001B[31ms""#),
                #"load.duration: "5\u{1B}[31ms" is not a duration (write e.g. 250ms, 30s, 2m, 1h)"#
            )
        ])
    func controlCharactersAreEscaped(text: String, expected: String) throws {
        let error = try #require(throws: ProfileError.self) { try Profile.parse(text, fileName: "demo.json") }
        #expect(error.description == expected)
    }

    @Test("malformed JSON names the file, line and column")
    func malformedJSON() {
        let text = "{\n  \"name\": \"demo\",\n  \"load\": {\"users\": 10,}\n}"
        do {
            _ = try Profile.parse(text, fileName: "demo.json")
            Issue.record("expected an error")
        } catch {
            #expect(error.path == "demo.json")
            #expect(error.description.hasPrefix("demo.json: line 3, column 24:"), "\(error)")
            #expect(!error.description.contains("\n"))
        }
    }

    @Test(
        "durations parse in every unit and print back",
        arguments: [
            ("250ms", Duration.milliseconds(250), "250ms"), ("30s", .seconds(30), "30s"), ("2m", .seconds(120), "2m"),
            ("1h", .seconds(3600), "1h"), ("1m30s", .seconds(90), "1m30s"), ("1.5s", .milliseconds(1500), "1.5s"),
            ("750us", .microseconds(750), "750us"), ("0s", .zero, "0s")
        ])
    func durations(text: String, duration: Duration, printed: String) {
        #expect(DurationText.parse(text) == duration)
        #expect(DurationText.format(duration) == printed)
    }

    @Test("text that is not a duration is rejected", arguments: ["", "10", "s", "10x", "1.2.3s", "-5s", "ms10", "1e3s"])
    func badDurations(text: String) {
        #expect(DurationText.parse(text) == nil)
    }

    @Test(
        "target.insecureSkipTLSVerify is off unless the profile turns it on, for URL and embedded targets alike",
        arguments: [
            ("{\"baseURL\": \"https://auth.example.com\"}", false),
            ("{\"baseURL\": \"https://auth.example.com\", \"insecureSkipTLSVerify\": true}", true),
            ("{\"embedded\": {\"tls\": true}, \"insecureSkipTLSVerify\": true}", true),
            ("{\"embedded\": {}, \"insecureSkipTLSVerify\": false}", false)
        ])
    func insecureSkipTLSVerify(target: String, expected: Bool) throws {
        let text = """
            {"name": "demo", "target": \(target), "load": {"users": 1, "duration": "1s"}, "flows": [{"name": "a", "kind": "x"}]}
            """
        #expect(try Profile.parse(text, fileName: "demo.json").connections.tls.insecureSkipTLSVerify == expected)
    }

    @Test(
        "target.http chooses the HTTP version, auto unless the profile says 1.1 or 2",
        arguments: [
            ("{\"baseURL\": \"https://auth.example.com\"}", HTTPVersionChoice.auto),
            ("{\"baseURL\": \"https://auth.example.com\", \"http\": \"auto\"}", .auto),
            ("{\"baseURL\": \"https://auth.example.com\", \"http\": \"1.1\"}", .http1),
            ("{\"baseURL\": \"http://auth.example.com\", \"http\": \"2\"}", .http2),
            ("{\"embedded\": {}, \"http\": \"2\"}", .http2)
        ])
    func httpVersion(target: String, expected: HTTPVersionChoice) throws {
        let text = """
            {"name": "demo", "target": \(target), "load": {"users": 1, "duration": "1s"}, "flows": [{"name": "a", "kind": "x"}]}
            """
        #expect(try Profile.parse(text, fileName: "demo.json").connections.http == expected)
    }

    @Test(
        "a target.http that is no version authload speaks is refused, naming the field and the choices", arguments: ["\"3\"", "2", "\"h2\""]
    )
    func badHTTPVersion(value: String) throws {
        let text = """
            {"name": "demo", "target": {"baseURL": "https://x", "http": \(value)}, "load": {"users": 1, "duration": "1s"},
             "flows": [{"name": "a", "kind": "x"}]}
            """
        let error = try #require(throws: ProfileError.self) { try Profile.parse(text, fileName: "demo.json") }
        #expect(error.description.hasPrefix("target.http: "), "\(error)")
        if value.hasPrefix("\"") { #expect(error.description.contains("is not one of: auto, 1.1, 2"), "\(error)") }
    }

    @Test(
        "base URLs split into endpoint and path prefix",
        arguments: [
            ("http://127.0.0.1:8080", Endpoint(host: "127.0.0.1", port: 8080), ""),
            ("https://auth.example.com/app/", Endpoint(host: "auth.example.com", port: 443, tls: true), "/app"),
            ("http://[::1]:9000/x", Endpoint(host: "::1", port: 9000), "/x")
        ])
    func baseURLs(text: String, endpoint: Endpoint, basePath: String) throws {
        let url = try TargetURL.parse(text).get()
        #expect(url.endpoint == endpoint)
        #expect(url.basePath == basePath)
    }
}
