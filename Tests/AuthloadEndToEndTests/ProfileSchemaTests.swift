import AuthloadCLI
import AuthloadCore
import Foundation
import Testing

/// `Profiles/authload-profile.schema.json` and authload's own profile validator describe the same profiles.
@Suite("The profile JSON Schema agrees with the validator", .serialized)
struct ProfileSchemaTests {
    static let profiles = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Profiles")
    static let schemaPath = profiles.appendingPathComponent("authload-profile.schema.json").path

    /// A valid profile that reaches every object the validator reads, so an unknown key can be put in each.
    static func base(load: [String: Any] = ["users": 1, "duration": "1s", "thinkTime": ["min": "1s", "max": "2s"]]) -> [String: Any] {
        [
            "$schema": "authload-profile.schema.json",
            "name": "probe",
            "target": [
                "embedded": [
                    "fcsdk": ["latency": ["fixed": "1ms"]],
                    "okta": ["rateLimit": ["limit": 1, "window": "1s"]],
                    "gccs": [String: Any](),
                    "streem": ["latency": ["lognormal": ["median": "1ms", "p99": "2ms"]]],
                    "capacity": ["workers": 1],
                    "faults": [String: Any]()
                ]
            ],
            "load": load,
            "flows": [
                ["name": "a", "kind": "fcsdk-login"], ["name": "b", "kind": "okta-idx-mfa"], ["name": "c", "kind": "gccs-auth"],
                ["name": "d", "kind": "streem-session", "login": "openid"], ["name": "e", "kind": "http"]
            ],
            "users": [String: Any](),
            "timeouts": [String: Any](),
            "connections": [String: Any](),
            "metrics": [String: Any](),
            "thresholds": [["metric": "steps", "maxErrorRate": 0.1]],
            "generator": [String: Any](),
            "compare": [String: Any]()
        ]
    }

    static var stagedLoad: [String: Any] { ["stages": [["duration": "1s", "target": 1]]] }

    /// Where an unknown key goes: the validator's path, and where the schema describes that object.
    static var probes: [(path: [Any], load: [String: Any]?, schema: [String])] {
        [
            ([], nil, []),
            (["target"], nil, ["properties", "target"]),
            (["target", "embedded"], nil, ["properties", "target", "properties", "embedded"]),
            (["target", "embedded", "fcsdk"], nil, ["properties", "target", "properties", "embedded", "properties", "fcsdk"]),
            (["target", "embedded", "okta"], nil, ["properties", "target", "properties", "embedded", "properties", "okta"]),
            (
                ["target", "embedded", "okta", "rateLimit"], nil,
                ["properties", "target", "properties", "embedded", "properties", "okta", "properties", "rateLimit"]
            ),
            (["target", "embedded", "gccs"], nil, ["properties", "target", "properties", "embedded", "properties", "gccs"]),
            (["target", "embedded", "streem"], nil, ["properties", "target", "properties", "embedded", "properties", "streem"]),
            (["target", "embedded", "capacity"], nil, ["properties", "target", "properties", "embedded", "properties", "capacity"]),
            (["target", "embedded", "faults"], nil, ["properties", "target", "properties", "embedded", "properties", "faults"]),
            (["target", "embedded", "fcsdk", "latency"], nil, ["$defs", "latency"]),
            (["target", "embedded", "streem", "latency", "lognormal"], nil, ["$defs", "latency", "properties", "lognormal"]),
            (["load"], nil, ["properties", "load"]),
            (["load", "thinkTime"], nil, ["$defs", "thinkTime", "oneOf", "1"]),
            (["load", "stages", 0], stagedLoad, ["properties", "load", "properties", "stages", "items"]),
            (["users"], nil, ["properties", "users"]),
            (["timeouts"], nil, ["properties", "timeouts"]),
            (["connections"], nil, ["properties", "connections"]),
            (["metrics"], nil, ["properties", "metrics"]),
            (["thresholds", 0], nil, ["properties", "thresholds", "items"]),
            (["generator"], nil, ["properties", "generator"]),
            (["compare"], nil, ["properties", "compare"]),
            (["flows", 0], nil, ["$defs", "flow-fcsdk-login"]),
            (["flows", 1], nil, ["$defs", "flow-okta-idx-mfa"]),
            (["flows", 2], nil, ["$defs", "flow-gccs-auth"]),
            (["flows", 3], nil, ["$defs", "flow-streem-session"]),
            (["flows", 4], nil, ["$defs", "flow-http"])
        ]
    }

    static func inserting(_ key: String, at path: [Any], into value: Any) -> Any {
        guard let first = path.first else {
            var object = value as! [String: Any]
            object[key] = "x"
            return object
        }
        if let index = first as? Int {
            var array = value as! [Any]
            array[index] = inserting(key, at: Array(path.dropFirst()), into: array[index])
            return array
        }
        var object = value as! [String: Any]
        object[first as! String] = inserting(key, at: Array(path.dropFirst()), into: object[first as! String]!)
        return object
    }

    /// What `authload validate` says of `profile`: nil when it passes, else its error line.
    static func validate(_ profile: Any) async throws -> String? {
        let data = try JSONSerialization.data(withJSONObject: profile, options: [.sortedKeys])
        let path = try temporaryFile("probe.json", String(decoding: data, as: UTF8.self))
        let captured = Captured()
        let code = await Authload.main(["validate", path], console: captured.console)
        return code == .success ? nil : captured.err
    }

    static func schemaNode(_ path: [String]) throws -> [String: Any] {
        var node: Any = try JSONSerialization.jsonObject(with: try #require(FileManager.default.contents(atPath: schemaPath)))
        for step in path {
            if let index = Int(step) {
                node = (node as! [Any])[index]
            } else {
                node = try #require((node as? [String: Any])?[step], "\(path)")
            }
        }
        return try #require(node as? [String: Any])
    }

    @Test("every object the validator reads names, in its unknown-field error, exactly the keys the schema lists there")
    func sameKeys() async throws {
        for probe in Self.probes {
            let profile = Self.inserting(
                "zzUnknown", at: probe.path, into: Self.base(load: probe.load ?? Self.base()["load"] as! [String: Any]))
            let error = try #require(try await Self.validate(profile), "\(probe.path): the validator accepted an unknown field")
            let list = try #require(error.range(of: "expected one of: "), "\(probe.path): \(error)")
            let accepted = Set(
                error[list.upperBound...].prefix { $0 != ")" }.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
            let described = Set(try #require(try Self.schemaNode(probe.schema)["properties"] as? [String: Any], "\(probe.schema)").keys)
            #expect(
                accepted == described,
                """
                \(probe.path): the validator accepts \(accepted.subtracting(described).sorted()) that the schema lacks, \
                the schema lists \(described.subtracting(accepted).sorted()) that the validator refuses
                """)
        }
    }

    @Test("target.tls's unknown-field error names exactly the keys the schema lists there")
    func tlsKeys() async throws {
        var profile = Self.base()
        profile["target"] = ["baseURL": "https://127.0.0.1:8443", "tls": ["zzUnknown": "x"]]
        let error = try #require(try await Self.validate(profile), "the validator accepted an unknown field in target.tls")
        let list = try #require(error.range(of: "expected one of: "), "\(error)")
        let accepted = Set(
            error[list.upperBound...].prefix { $0 != ")" }.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
        let described = try #require(
            try Self.schemaNode(["properties", "target", "properties", "tls"])["properties"] as? [String: Any], "target.tls in the schema")
        #expect(accepted == Set(described.keys))
        let target = try #require(try Self.schemaNode(["properties", "target"])["properties"] as? [String: Any])
        #expect(target["tls"] != nil && target["insecureSkipTLSVerify"] != nil)
    }

    @Test("the base profile of those probes is valid for both")
    func baseIsValid() async throws {
        #expect(try await Self.validate(Self.base()) == nil)
        #expect(try await Self.validate(Self.base(load: Self.stagedLoad)) == nil)
    }

    @Test("every shipped profile, and the probes' base profiles, pass the schema", .enabled(if: JSONSchemaTool.enabled))
    func shippedProfilesPass() throws {
        let shipped = try FileManager.default.contentsOfDirectory(atPath: Self.profiles.path)
            .filter { $0.hasSuffix(".json") && !$0.hasSuffix(".schema.json") }.map { Self.profiles.appendingPathComponent($0).path }
        #expect(shipped.count >= 7)
        var instances = shipped
        // The one target.tls key the embedded server takes.
        var resumeOff = Self.base()
        var target = try #require(resumeOff["target"] as? [String: Any])
        target["tls"] = ["resumeSessions": false]
        resumeOff["target"] = target
        for base in [Self.base(), Self.base(load: Self.stagedLoad), resumeOff] {
            let data = try JSONSerialization.data(withJSONObject: base, options: [.sortedKeys])
            instances.append(try temporaryFile("base.json", String(decoding: data, as: UTF8.self)))
        }
        let checked = try JSONSchemaTool.validate(schema: Self.schemaPath, instances)
        #expect(checked.status == 0, "\(checked.output)")
    }

    /// Profiles the validator refuses for a reason a schema can state.
    static var rejected: [(String, (inout [String: Any]) -> Void)] {
        [
            ("unknown top-level field", { $0["nmae"] = "x" }),
            ("no name", { $0["name"] = nil }),
            ("a name with a slash", { $0["name"] = "a/b" }),
            ("negative users", { $0["load"] = ["users": -5, "duration": "1s"] }),
            ("a duration without a unit", { $0["load"] = ["users": 1, "duration": "10"] }),
            ("an unknown load model", { $0["load"] = ["model": "burst", "users": 1, "duration": "1s"] }),
            ("no flows", { $0["flows"] = [Any]() }),
            ("an unknown flow kind", { $0["flows"] = [["name": "a", "kind": "saml"]] }),
            ("a flow option of another kind", { $0["flows"] = [["name": "a", "kind": "fcsdk-login", "factor": "sms"]] }),
            ("an unknown Streem refresh mode", { $0["flows"] = [["name": "a", "kind": "streem-session", "refresh": "lazy"]] }),
            ("a relative refreshPath", { $0["flows"] = [["name": "a", "kind": "streem-session", "refreshPath": "v1/refresh"]] }),
            ("an error rate above 1", { $0["thresholds"] = [["metric": "steps", "maxErrorRate": 1.5]] }),
            (
                "an unknown threshold samples choice",
                { $0["thresholds"] = [["metric": "a", "percentile": 99, "max": "1s", "samples": "ok"]] }
            ),
            ("both baseURL and embedded", { $0["target"] = ["baseURL": "http://127.0.0.1:8080", "embedded": [String: Any]()] }),
            ("a metrics listen address that is not one", { $0["metrics"] = ["listen": "localhost"] }),
            ("an unknown connection policy", { $0["connections"] = ["policy": "pooled"] }),
            (
                "a client certificate without its key",
                { $0["target"] = ["baseURL": "https://127.0.0.1:8443", "tls": ["clientCertificate": "client.pem"]] }
            ),
            (
                "a CA to check against beside insecureSkipTLSVerify",
                { $0["target"] = ["baseURL": "https://127.0.0.1:8443", "insecureSkipTLSVerify": true, "tls": ["caFile": "ca.pem"]] }
            ),
            ("TLS settings for the embedded server", { $0["target"] = ["embedded": [String: Any](), "tls": [String: Any]()] }),
            (
                "TLS settings beside resumeSessions for the embedded server",
                { $0["target"] = ["embedded": [String: Any](), "tls": ["resumeSessions": false, "serverName": "localhost"]] }
            ),
            (
                "a resumeSessions that is not a boolean",
                { $0["target"] = ["baseURL": "https://127.0.0.1:8443", "tls": ["resumeSessions": "no"]] }
            ),
            (
                "a GCCS cancelAfter that is no verification status",
                { $0["flows"] = [["name": "a", "kind": "gccs-auth", "cancelAfter": "AuthCompleted"]] }
            ),
            (
                "a GCCS secondaryCertification that is neither auto nor a boolean",
                { $0["flows"] = [["name": "a", "kind": "gccs-auth", "secondaryCertification": "yes"]] }
            ),
            (
                "an Okta flow with both factor and factors",
                { $0["flows"] = [["name": "a", "kind": "okta-idx-mfa", "factor": "sms", "factors": ["email"]]] }
            ),
            ("an Okta factor the flow cannot pick", { $0["flows"] = [["name": "a", "kind": "okta-idx-mfa", "factors": ["fax"]]] })
        ]
    }

    @Test("each validator rejection the schema can express is a schema rejection too", .enabled(if: JSONSchemaTool.enabled))
    func rejectionsAgree() async throws {
        for (name, change) in Self.rejected {
            var profile = Self.base()
            profile["target"] = ["embedded": [String: Any]()]
            profile["flows"] = [["name": "a", "kind": "fcsdk-login"]]
            change(&profile)
            #expect(try await Self.validate(profile) != nil, "\(name): the validator accepted it")
            let data = try JSONSerialization.data(withJSONObject: profile, options: [.sortedKeys])
            let checked = try JSONSchemaTool.validate(
                schema: Self.schemaPath, [try temporaryFile("rejected.json", String(decoding: data, as: UTF8.self))])
            #expect(checked.status != 0, "\(name): the schema accepted it")
        }
    }

    @Test("every profile option docs/protocols.md names as what changes one of authload's own choices is in the schema")
    func protocolsNameRealOptions() throws {
        let doc = try String(contentsOf: packageRoot.appendingPathComponent("docs/protocols.md"), encoding: .utf8)
        let schema = try JSONValue.parse(Array(try Data(contentsOf: URL(fileURLWithPath: Self.schemaPath))))
        /// Every property name anywhere in the schema.
        func properties(_ value: JSONValue) -> Set<String> {
            if let array = value.arrayValue { return array.reduce(into: []) { $0.formUnion(properties($1)) } }
            guard let object = value.objectValue else { return [] }
            var names = Set<String>()
            for (key, child) in object {
                if key == "properties", let fields = child.objectValue { names.formUnion(fields.map(\.key)) }
                names.formUnion(properties(child))
            }
            return names
        }
        let known = properties(schema)
        let named = doc.matches(of: try Regex(#"`(?:flows\[\]|target\.embedded\.[a-z]+)\.([A-Za-z]+)`"#)).map {
            String(doc[$0.range]).split(separator: ".").last!.dropLast()
        }
        #expect(named.count >= 12, "each of authload's choices names its option")
        for option in named { #expect(known.contains(String(option)), "docs/protocols.md names \(option), which no profile has") }
        #expect(!doc.contains("Published rtCodes"), "the embedded server's rtCodes are ours")
    }

    @Test("no document uses a marker it does not define: where a fact comes from is said in words")
    func noUndefinedMarkers() throws {
        let docs = packageRoot.appendingPathComponent("docs")
        let files = try FileManager.default.contentsOfDirectory(atPath: docs.path).filter { $0.hasSuffix(".md") }
        #expect(files.contains("flows.md") && files.contains("staging-server.md"))
        for file in files {
            let text = try String(contentsOf: docs.appendingPathComponent(file), encoding: .utf8)
            #expect(!text.contains("[M]"), "\(file)")
        }
    }
}
