import AuthloadCore
import Testing

@Suite("Per-user data: templates and CSV feeders")
struct UserFeederTests {
    static let csv = [
        "username,password,phone,invitationCode",
        #"alice@example.com,"pa,ss",+15551230001,123456789"#,
        #"bob@example.com,"say ""hi""",+15551230002,223456789"# + "\r",
        "carol@example.com,pw3,+15551230003,323456789",
        ""
    ].joined(separator: "\n")

    @Test("templates fill {n} and zero-padded {n:W}; username and password default")
    func templates() {
        let feeder = UserFeeder(templates: ["invitationCode": "1{n:8}", "companyCode": "acme", "odd": "{x}{n"])
        let identity = feeder.identity(for: 42)
        #expect(identity.username == "user42")
        #expect(identity.password == "demo-password")
        #expect(identity["invitationCode"] == "100000042")
        #expect(identity["companyCode"] == "acme")
        #expect(identity["odd"] == "{x}{n")
        #expect(UserFeeder().identity(for: 0) == UserIdentity(username: "user0", password: "demo-password"))
    }

    @Test("username and password follow every change of the fields, and a copy keeps what it had")
    func credentialsFollowFields() {
        var identity = UserIdentity(fields: ["username": "a", "password": "p", "code": "1"])
        let copy = identity
        identity.fields["username"] = "b"
        #expect(identity.username == "b" && identity.password == "p" && identity["code"] == "1")
        identity.fields.removeValue(forKey: "password")
        #expect(identity.password == "")
        identity.fields = ["password": "q"]
        #expect(identity.username == "" && identity.password == "q" && identity["code"] == nil)
        #expect(copy.username == "a" && copy.password == "p" && copy.fields == ["username": "a", "password": "p", "code": "1"])
        #expect(copy != identity)
        #expect(UserIdentity(fields: identity.fields) == identity)
        // A feeder's refill, which changes the fields in place, moves the credentials with them.
        let feeder = UserFeeder(templates: ["username": "user{n}", "password": "pw{n}"])
        var refilled = feeder.identity(for: 1)
        feeder.refill(&refilled, for: 7)
        #expect(refilled.username == "user7" && refilled.password == "pw7" && refilled == feeder.identity(for: 7))
    }

    @Test("{iteration} and {iteration:W} fill the user's flow iteration; only such a template varies by iteration")
    func iterationTemplates() throws {
        let feeder = UserFeeder(templates: ["invitationCode": "1{n:5}{iteration:3}", "companyCode": "acme", "tag": "{iteration}-{n}"])
        #expect(feeder.identity(for: 42)["invitationCode"] == "100042000", "iteration 0 by default")
        #expect(feeder.identity(for: 42, iteration: 7)["invitationCode"] == "100042007")
        #expect(feeder.identity(for: 3, iteration: 12)["tag"] == "12-3")
        #expect(feeder.variesByIteration)
        #expect(feeder.variesByIteration("invitationCode"))
        #expect(!feeder.variesByIteration("companyCode"))
        #expect(!UserFeeder(templates: ["invitationCode": "1{n:8}"]).variesByIteration)
        let csv = try UserFeeder.csv(Self.csv, fileName: "users.csv", assignment: .sequential)
        #expect(!csv.variesByIteration("invitationCode"), "a CSV column gives a user one value")
        #expect(UserFeeder.problem(inTemplate: "1{n:5}{iteration:65}") == "{iteration:65} pads to more than 64 digits")
    }

    @Test("refilling another user's identity gives what the feeder makes for the new user, from templates and from a CSV")
    func refill() throws {
        let templates = UserFeeder(templates: ["invitationCode": "1{n:5}{iteration:3}", "companyCode": "acme", "username": "u{n}"])
        let csv = try UserFeeder.csv(Self.csv, fileName: "users.csv", assignment: .sequential)
        for feeder in [templates, csv] {
            var identity = feeder.identity(for: 7)
            for index in [8, 2, 12_345] {
                feeder.refill(&identity, for: index)
                #expect(identity == feeder.identity(for: index), "user \(index)")
            }
        }
    }

    // Found with the profile fuzz harness (Fuzz/run.sh profile): `{n:99999999999}` passed validation and then made
    // every user's identity allocate about 100 GB, so the first user crashed the run.
    @Test(
        "a profile template padding to more than 64 digits is refused, naming its field",
        arguments: [
            (#""username": "u{n:99999999999}""#, "users.username: {n:99999999999} pads to more than 64 digits"),
            (#""password": "{n:65}""#, "users.password: {n:65} pads to more than 64 digits"),
            (#""fields": {"invitationCode": "1{n:8}{n:1000}"}"#, "users.fields.invitationCode: {n:1000} pads to more than 64 digits")
        ])
    func hugePaddingIsRefused(users: String, expected: String) throws {
        let text = """
            {"name": "demo", "target": {"embedded": {}}, "load": {"users": 1, "duration": "1s"},
             "users": {\(users)}, "flows": [{"name": "a", "kind": "x"}]}
            """
        let error = try #require(throws: ProfileError.self) { try Profile.parse(text, fileName: "demo.json") }
        #expect(error.description == expected)
    }

    @Test("a template padding to exactly 64 digits is accepted, and wider padding built in code is clamped to 64")
    func paddingLimit() throws {
        let text = """
            {"name": "demo", "target": {"embedded": {}}, "load": {"users": 1, "duration": "1s"},
             "users": {"username": "u{n:64}"}, "flows": [{"name": "a", "kind": "x"}]}
            """
        let plan = try Profile.parse(text, fileName: "demo.json")
        #expect(plan.users.identity(for: 7).username == "u" + String(repeating: "0", count: 63) + "7")
        let feeder = UserFeeder(templates: ["username": "{n:99999999999}"])
        #expect(feeder.identity(for: 7).username == String(repeating: "0", count: 63) + "7")
    }

    @Test("a CSV with quotes, commas, CRLF and a trailing blank line gives one identity per row")
    func parsesCSV() throws {
        let feeder = try UserFeeder.csv(Self.csv, fileName: "users.csv", assignment: .sequential)
        #expect(feeder.columns == ["username", "password", "phone", "invitationCode"])
        #expect(feeder.identity(for: 0).password == "pa,ss")
        #expect(feeder.identity(for: 1).password == #"say "hi""#)
        #expect(feeder.identity(for: 2)["invitationCode"] == "323456789")
        #expect(feeder.identity(for: 3).username == "alice@example.com", "sequential wraps round")
    }

    @Test("random assignment is seeded: the same seed picks the same rows, and rows get used")
    func randomAssignment() throws {
        let a = try UserFeeder.csv(Self.csv, fileName: "users.csv", assignment: .random, seed: 9)
        let b = try UserFeeder.csv(Self.csv, fileName: "users.csv", assignment: .random, seed: 9)
        let picks = (0..<30).map { a.identity(for: $0).username }
        #expect(picks == (0..<30).map { b.identity(for: $0).username })
        #expect(Set(picks).count == 3)
    }

    @Test("unique assignment refuses more users than rows, naming the file and the fix")
    func uniqueExhausted() throws {
        let feeder = try UserFeeder.csv(Self.csv, fileName: "users.csv", assignment: .unique)
        try feeder.check(users: 3, flowsNeeding: [])
        #expect(
            throws: ProfileError(
                "users.assignment",
                "unique needs a row per user: users.csv has 3 rows for 4 users (add rows, lower load.users, or use sequential)")
        ) {
            try feeder.check(users: 4, flowsNeeding: [])
        }
    }

    @Test("a flow that needs a column the users lack is refused, naming the flow and the column")
    func missingColumn() throws {
        let feeder = try UserFeeder.csv(Self.csv, fileName: "users.csv", assignment: .sequential)
        #expect(throws: ProfileError("flows[1]", "needs the user field \"companyCode\" (users.csv has no \"companyCode\" column; add it)"))
        {
            try feeder.check(users: 1, flowsNeeding: [("flows[0]", ["phone"]), ("flows[1]", ["invitationCode", "companyCode"])])
        }
        #expect(throws: ProfileError("flows[0]", "needs the user field \"phone\" (users: no \"phone\" template; add it)")) {
            try UserFeeder().check(users: 1, flowsNeeding: [("flows[0]", ["phone"])])
        }
    }

    @Test(
        "broken CSV files are refused with the line",
        arguments: [
            ("username,password\nalice,pw,extra\n", "users.csv: line 2: 3 fields, but the header has 2"),
            ("username,password\n\"alice,pw\n", "users.csv: line 2: a quoted field is never closed"),
            (
                "username,password\nal\"ice,pw\n",
                "users.csv: line 2: a quote inside an unquoted field (quote the whole field and double inner quotes)"
            ),
            ("username,password\n\"alice\"x,pw\n", "users.csv: line 2: text after a closing quote"),
            ("username,,password\na,b,c\n", "users.csv: line 1: column 2 of the header has no name"),
            ("username,username\na,b\n", "users.csv: line 1: column \"username\" appears twice"),
            ("username,password\n", "users.csv: has a header but no rows"),
            ("", "users.csv: is empty: it needs a header row naming the columns"),
            ("email,password\na,b\n", "users.csv: has no \"username\" column (columns: email, password)")
        ])
    func brokenCSV(text: String, expected: String) {
        do {
            _ = try UserFeeder.csv(text, fileName: "users.csv", assignment: .sequential)
            Issue.record("expected: \(expected)")
        } catch {
            #expect(error.description == expected)
        }
    }

    @Test(
        "a profile reads users from a csv file through the reader it is given, or names what is wrong",
        arguments: [
            (#"{"csv": "data/users.csv", "assignment": "unique"}"#, nil),
            (
                #"{"csv": "data/missing.csv"}"#,
                #"users.csv: cannot read "data/missing.csv" (paths are relative to the current directory or the profile's)"#
            ),
            (#"{"csv": "data/users.csv", "username": "x"}"#, "users: give either csv or templates (username), not both"),
            (#"{"assignment": "unique"}"#, "users.assignment: applies to a csv file only"),
            (
                #"{"csv": "data/users.csv", "assignment": "shuffled"}"#,
                #"users.assignment: "shuffled" is not one of: sequential, random, unique"#
            )
        ] as [(String, String?)])
    func profileUsers(users: String, expected: String?) {
        let profile =
            #"{"name": "p", "target": {"embedded": {}}, "load": {"users": 3, "duration": "1s"}, "flows": [{"name": "a", "kind": "x"}], "users": \#(users)}"#
        do {
            let plan = try Profile.parse(profile, fileName: "p.json") { $0 == "data/users.csv" ? Self.csv : nil }
            #expect(expected == nil)
            #expect(plan.users.assignment == .unique)
            #expect(plan.users.identity(for: 2).username == "carol@example.com")
        } catch {
            #expect(error.description == expected)
        }
    }
}
