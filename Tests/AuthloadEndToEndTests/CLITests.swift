import AuthloadCLI
import AuthloadCore
import Foundation
import Testing

/// Collects what a command prints.
final class Captured: Sendable {
    private let text = Locked(["", ""])
    var out: String { text.withLock { $0[0] } }
    var err: String { text.withLock { $0[1] } }

    var console: Console {
        Console(out: { s in self.text.withLock { $0[0] += s } }, err: { s in self.text.withLock { $0[1] += s } }, isTerminal: false)
    }
}

let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

/// `authload validate` of a one-user profile with this flow entry and embedded-server options: exit code and stderr.
func validate(flow: String, embedded: String) async throws -> (ExitCode, String) {
    let path = try temporaryFile(
        "bad.json",
        """
        {"name": "bad", "target": {"embedded": \(embedded)}, "load": {"users": 1, "duration": "1s"}, "flows": [\(flow)]}
        """)
    let captured = Captured()
    let code = await Authload.main(["validate", path], console: captured.console)
    return (code, captured.err)
}

func temporaryFile(_ name: String, _ contents: String) throws -> String {
    let path = (try scratchDirectory("profile") as NSString).appendingPathComponent(name)
    try contents.write(toFile: path, atomically: true, encoding: .utf8)
    return path
}

@Suite("Command line")
struct CLITests {
    @Test("--help prints the overview, and each command has its own help")
    func help() async {
        for (arguments, expected) in [
            (["--help"], "USAGE: authload <command> [options]"), (["run", "--help"], "USAGE: authload run PROFILE"),
            (["help", "serve"], "USAGE: authload serve"), (["validate", "-h"], "USAGE: authload validate PROFILE")
        ] {
            let captured = Captured()
            let code = await Authload.main(arguments, console: captured.console)
            #expect(code == .success)
            #expect(captured.out.contains(expected), "\(arguments)")
        }
        let captured = Captured()
        _ = await Authload.main(["--help"], console: captured.console)
        #expect(captured.out == HelpText.text(for: nil)! + "\n")
    }

    @Test("the overview says serve serves every flow, as serve's own help does")
    func serveOverview() {
        let overview = HelpText.text(for: nil)!
        #expect(overview.contains("\n  serve              Start the embedded staging server (all four flows)\n"))
        for flow in ["FCSDK login", "Okta IDX", "GCCS", "Streem"] { #expect(HelpText.text(for: "serve")!.contains(flow)) }
    }

    @Test(
        "usage mistakes exit 64 with one line that says what to fix",
        arguments: [
            (["run"], "error: missing PROFILE (a JSON file, e.g. Profiles/demo.json)"),
            (["run", "x.json", "--users", "0"], "error: --users: must be a whole number greater than 0, found \"0\""),
            (["run", "x.json", "--duration", "soon"], "error: --duration: \"soon\" is not a duration (write e.g. 30s, 2m, 1h)"),
            (["run", "x.json", "--duration", "0s"], "error: --duration: must be longer than 0s, found \"0s\""),
            (["launch"], "error: unknown command \"launch\" (commands: run, simulate, validate, serve, report, compare, merge, help)"),
            (["serve", "--cert-out", "cert.pem"], "error: --cert-out needs --tls (a plain HTTP server has no certificate)"),
            (
                ["validate", "/nonexistent/profile.json"],
                "error: cannot read profile /nonexistent/profile.json: no such file or not readable"
            )
        ])
    func usageErrors(arguments: [String], message: String) async {
        let captured = Captured()
        let code = await Authload.main(arguments, console: captured.console)
        #expect(code == .usage)
        #expect(captured.err.split(separator: "\n").first.map(String.init) == message)
    }

    @Test("serve's help lists the TLS options, and they parse")
    func serveTLSOptions() async throws {
        let captured = Captured()
        #expect(await Authload.main(["serve", "--help"], console: captured.console) == .success)
        #expect(captured.out == HelpText.text(for: "serve")! + "\n")
        #expect(captured.out.contains("GCCS (/api/v3/auth..., STOMP over\nWebSocket at /ws/v3/app/websocket)"))
        #expect(captured.out.hasPrefix("USAGE: authload serve [--port P] [--host H] [--config FILE] [--tls [--cert-out FILE]]\n"))
        #expect(captured.out.contains("\n  --tls               Serve HTTPS with a self-signed certificate"))
        #expect(captured.out.contains("\n  --cert-out FILE     Write that certificate (PEM) to FILE, for clients to trust\n"))
        guard case .serve(let options) = try Command.parse(["serve", "--tls", "--cert-out", "c.pem", "-p", "0"]) else {
            Issue.record("expected serve")
            return
        }
        #expect(options.tls && options.certificateOutput == "c.pem" && options.port == 0)
    }

    @Test("validate names the field of a bad flow kind and exits 64")
    func unknownFlowKind() async throws {
        let path = try temporaryFile(
            "bad.json",
            """
            {"name": "bad", "target": {"embedded": {}}, "load": {"users": 1, "duration": "1s"},
             "flows": [{"name": "a", "kind": "fcsdk-logon"}]}
            """)
        let captured = Captured()
        let code = await Authload.main(["validate", path], console: captured.console)
        #expect(code == .usage)
        #expect(
            captured.err
                == "error: bad.json: flows[0].kind: \"fcsdk-logon\" is not a flow kind (known kinds: fcsdk-login, okta-idx-mfa, gccs-auth, streem-session, http)\n"
        )
    }

    @Test("validate names a bad embedded-server option")
    func badStagingOption() async throws {
        let path = try temporaryFile(
            "bad.json",
            """
            {"name": "bad", "target": {"embedded": {"fcsdk": {"errorRate": 1.5}}}, "load": {"users": 1, "duration": "1s"},
             "flows": [{"name": "a", "kind": "fcsdk-login"}]}
            """)
        let captured = Captured()
        let code = await Authload.main(["validate", path], console: captured.console)
        #expect(code == .usage)
        #expect(captured.err == "error: bad.json: target.embedded.fcsdk.errorRate: must be between 0 and 1, found 1.5\n")
    }

    @Test(
        "validate names a bad GCCS flow or staging option",
        arguments: [
            (
                #"{"name": "g", "kind": "gccs-auth", "cancelAfter": "AuthCompleted"}"#, "{}",
                #"flows[0].cancelAfter: "AuthCompleted" is not one of: CreateChannel, SelectNodes, StartVerificationOfNodes, CompleteVerificationOfNodes"#
            ),
            (
                #"{"name": "g", "kind": "gccs-auth", "secondaryCertification": "yes"}"#, "{}",
                #"flows[0].secondaryCertification: must be "auto", true or false"#
            ),
            (
                #"{"name": "g", "kind": "gccs-auth"}"#, #"{"gccs": {"secondaryAuthRate": 2}}"#,
                "target.embedded.gccs.secondaryAuthRate: must be between 0 and 1, found 2.0"
            ),
            (
                #"{"name": "g", "kind": "gccs-auth", "heartBeat": "10s"}"#, "{}",
                #"flows[0].heartBeat: must be "cx,cy" in milliseconds, e.g. "10000,10000""#
            ),
            (
                #"{"name": "g", "kind": "gccs-auth", "apiPrefix": "api/v3"}"#, "{}",
                #"flows[0].apiPrefix: must be empty or start with '/' and not end with one, e.g. "/api/v3""#
            ),
            (
                #"{"name": "g", "kind": "gccs-auth", "subprotocols": ["v12.stomp", 12]}"#, "{}",
                "flows[0].subprotocols[1]: expected a string, found a number"
            ),
            (
                #"{"name": "g", "kind": "gccs-auth"}"#, #"{"gccs": {"nodeDelay": {"fixed": "soon"}}}"#,
                #"target.embedded.gccs.nodeDelay.fixed: "soon" is not a duration (write e.g. 250ms, 30s, 2m, 1h)"#
            ),
            (
                #"{"name": "g", "kind": "gccs-auth"}"#, #"{"gccs": {"failRate": 0.1}}"#,
                "target.embedded.gccs.failRate: unknown field (expected one of: apiPrefix, authTimeRemaining, busyRate, cancelRaceRate, "
                    + "clientKey, failureRate, latency, nodeDelay, queue, rejectRate, repeatStatuses, secondaryAuthRate, skipStatuses, "
                    + "socketDropRate, socketPath, "
                    + "stompErrorRate, timeoutRate, verifyEncodedFields)"
            )
        ])
    func badGCCSOption(flow: String, embedded: String, expected: String) async throws {
        let (code, err) = try await validate(flow: flow, embedded: embedded)
        #expect(code == .usage)
        #expect(err == "error: bad.json: \(expected)\n")
    }

    @Test("every profile shipped in Profiles/ validates")
    func shippedProfiles() async throws {
        let directory = packageRoot.appendingPathComponent("Profiles")
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter {
            $0.hasSuffix(".json") && !$0.hasSuffix(".schema.json")
        }
        #expect(files.contains("demo.json"))
        for file in files {
            let captured = Captured()
            let code = await Authload.main(["validate", directory.appendingPathComponent(file).path], console: captured.console)
            #expect(code == .success, "\(file): \(captured.err)")
            #expect(captured.err.isEmpty, "\(file) warns: \(captured.err)")
        }
    }

    @Test(
        "validate warns when a closed-model invitation flow redeems the same single-use code at every iteration",
        arguments: [
            (#""users": 5, "duration": "1m""#, "1{n:8}", true),
            (#""users": 5, "duration": "1m""#, "1{n:5}{iteration:3}", false),
            (#""model": "open", "arrivalRate": "5/s", "duration": "1m""#, "1{n:8}", false)
        ])
    func singleUseInvitationWarning(load: String, code: String, warns: Bool) async throws {
        let path = try temporaryFile(
            "invite.json",
            """
            {"name": "invite", "target": {"embedded": {}}, "load": {\(load)},
             "users": {"fields": {"invitationCode": "\(code)"}},
             "flows": [{"name": "fcsdk", "kind": "fcsdk-login"}, {"name": "streem", "kind": "streem-session", "hold": "10s"}],
             "timeouts": {"flow": "1m"}}
            """)
        let captured = Captured()
        #expect(await Authload.main(["validate", path], console: captured.console) == .success, "a warning, not a refusal")
        let expected =
            "warning: flows[1] (streem): invitationCode is single-use, but each user sends the same one at every iteration, "
            + "so a server that enforces it answers 410 from a user's second iteration on; give it a template with {iteration}, "
            + "e.g. \"invitationCode\": \"1{n:5}{iteration:3}\"\n"
        #expect(captured.err == (warns ? expected : ""))
    }
}

@Suite("Command line: load models")
struct LoadModelCLITests {
    @Test("run's help explains the load models, the generator limits and every exit status")
    func runHelp() async {
        let captured = Captured()
        #expect(await Authload.main(["run", "--help"], console: captured.console) == .success)
        #expect(captured.out == HelpText.text(for: "run")! + "\n")
        #expect(captured.out.contains("\n\"open\": load.arrivalRate (\"100/s\", \"600/m\") starts a new user per arrival, who\n"))
        #expect(captured.out.contains("\"generator\": {\"maxLagP99\": \"100ms\", \"maxDroppedRate\": 0.01, \"dropAfter\": \"1s\"}"))
        #expect(
            captured.out.contains(
                "timeseries.csv, errors.csv, junit.xml, result.json and, for load.stages,\ncapacity.csv into the report directory."))
        #expect(captured.out.contains("FLOWS (flows[].kind): fcsdk-login, okta-idx-mfa, gccs-auth (REST and a STOMP status\n"))
        #expect(captured.out.contains("CHECKPOINTS: every metrics.checkpoint (default 10s) result.json is saved"))
        #expect(
            captured.out.contains("THRESHOLDS: \"steps\" pools every request step (not events). Latency bounds judge\nsuccessful samples"))
        #expect(captured.out.contains("COUNTS: \"HTTP requests\" are the requests sent on the wire"))
        #expect(captured.out.contains("When nothing has succeeded for generator.unreachableAfter (default 30s;"))
        #expect(
            captured.out.contains(
                "EXIT STATUS: 0 pass, 1 run error (e.g. no flow succeeded), 2 threshold failed,\n"
                    + "             3 generator could not keep its schedule, 64 bad profile, 130 interrupted."))
    }

    @Test("validate describes an open-model load, and names a bad rate's field")
    func validateOpen() async throws {
        let good = try temporaryFile(
            "open.json",
            """
            {"name": "open", "target": {"embedded": {}}, "load": {"model": "open", "arrivalRate": "600/m", "duration": "1m"},
             "flows": [{"name": "login", "kind": "fcsdk-login"}]}
            """)
        let captured = Captured()
        #expect(await Authload.main(["validate", good], console: captured.console) == .success)
        #expect(
            captured.out.contains("OK — open model, 10 arrivals/s (at most 10,000 users), duration 1m, target the embedded staging server"))
        let bad = try temporaryFile(
            "bad.json",
            """
            {"name": "bad", "target": {"embedded": {}}, "load": {"model": "open", "arrivalRate": "fast", "duration": "1m"},
             "flows": [{"name": "login", "kind": "fcsdk-login"}]}
            """)
        let failed = Captured()
        #expect(await Authload.main(["validate", bad], console: failed.console) == .usage)
        #expect(
            failed.err
                == "error: bad.json: load.arrivalRate: \"fast\" is not a rate (write e.g. \"100/s\", \"600/m\" or a number per second)\n")
    }

    @Test("an open model with a unique user feeder needs a row per arrival, since each arrival is a new user")
    func uniqueFeederPerArrival() async throws {
        let path = try temporaryFile(
            "open.json",
            """
            {"name": "open", "target": {"embedded": {}}, "load": {"model": "open", "arrivalRate": 5, "duration": "2s"},
             "users": {"csv": "users.csv", "assignment": "unique"}, "flows": [{"name": "login", "kind": "fcsdk-login"}]}
            """)
        let csv = (path as NSString).deletingLastPathComponent + "/users.csv"
        try "username,password\na,p\nb,p\nc,p\n".write(toFile: csv, atomically: true, encoding: .utf8)
        let captured = Captured()
        #expect(await Authload.main(["validate", path], console: captured.console) == .usage)
        #expect(
            captured.err.hasPrefix("error: open.json: users.assignment: unique needs a row per user: users.csv has 3 rows for 10 users"),
            "\(captured.err)")
    }

    @Test("--users on an open-model profile is refused with the field to set instead")
    func usersOverrideOnOpen() async throws {
        let path = try temporaryFile(
            "open.json",
            """
            {"name": "open", "target": {"embedded": {}}, "load": {"model": "open", "arrivalRate": 5, "duration": "1s"},
             "flows": [{"name": "login", "kind": "fcsdk-login"}]}
            """)
        let captured = Captured()
        #expect(await Authload.main(["run", path, "--users", "5"], console: captured.console) == .usage)
        #expect(captured.err.hasPrefix("error: --users: this profile's load has no fixed population (open model; set load.maxUsers)\n"))
    }
}
