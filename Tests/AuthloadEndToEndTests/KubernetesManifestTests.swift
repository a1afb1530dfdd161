import AuthloadCore
import AuthloadReport
import AuthloadStaging
import AuthloadTransport
import Foundation
import Testing

/// kubernetes-validate from PyPI, which `.ci/run` installs (with PyYAML, which it depends on).
enum KubernetesValidate {
    static let python: [String]? = {
        for candidate in [["/usr/bin/env", "python3"], ["/usr/bin/python3"]]
        where IsolatedPython.run(candidate, ["-m", "kubernetes_validate", "--version"]).status == 0 {
            return candidate
        }
        return nil
    }()

    static let enabled = python != nil || Interop.required

    static func require() throws -> [String] {
        try #require(python, "AUTHLOAD_REQUIRE_INTEROP=1, but python3 -m kubernetes_validate fails: pip install kubernetes-validate")
    }
}

/// `deploy/kubernetes/`: valid Kubernetes, and the commands it gives are the ones that work — run here as the
/// manifests write them, with the pods' paths in a temporary directory.
@Suite("The Kubernetes manifests", .serialized, .timeLimit(.minutes(2)), .enabled(if: KubernetesValidate.enabled))
struct KubernetesManifestTests {
    static let directory = packageRoot.appendingPathComponent("deploy/kubernetes")
    static let manifests = ["configmap.yaml", "volume.yaml", "shards-job.yaml", "merge-job.yaml", "reports-pod.yaml"]

    /// Every document of a manifest, as JSON (PyYAML reads it; the test reads the JSON).
    static func documents(_ name: String) throws -> [JSONValue] {
        let python = try KubernetesValidate.require()
        let read = IsolatedPython.run(
            python,
            [
                "-c", "import json, sys, yaml; print(json.dumps(list(yaml.safe_load_all(open(sys.argv[1])))))",
                directory.appendingPathComponent(name).path
            ])
        #expect(read.status == 0, "\(read.output)")
        return try #require(JSONValue.parse(read.output).arrayValue)
    }

    @Test("every manifest passes kubernetes-validate --strict, which rejects a field Kubernetes does not know")
    func valid() throws {
        let python = try KubernetesValidate.require()
        let paths = Self.manifests.map { Self.directory.appendingPathComponent($0).path }
        let checked = IsolatedPython.run(python, ["-m", "kubernetes_validate", "--strict"] + paths)
        #expect(checked.status == 0, "\(checked.output)")
        for name in Self.manifests { #expect(checked.output.contains("\(name) passed"), "\(checked.output)") }

        let job = try String(contentsOfFile: Self.directory.appendingPathComponent("shards-job.yaml").path, encoding: .utf8)
        let broken = try temporaryFile("broken-job.yaml", job.replacingOccurrences(of: "  parallelism: 4", with: "  paralelism: 4"))
        #expect(IsolatedPython.run(python, ["-m", "kubernetes_validate", "--strict", broken]).status != 0, "a misspelt field fails")
    }

    @Test("every pod runs as the image's user, uid 10001, with fsGroup 10001, so the shards can write /reports")
    func podsCanWriteReports() throws {
        let dockerfile = try String(contentsOfFile: Self.directory.appendingPathComponent("Dockerfile").path, encoding: .utf8)
        #expect(dockerfile.contains("--uid 10001 --gid 10001"))
        #expect(dockerfile.contains("\nUSER 10001:10001\n"))
        for name in ["shards-job.yaml", "merge-job.yaml", "reports-pod.yaml"] {
            let document = try #require(Self.documents(name).first)
            let pod = try #require(document["kind"]?.stringValue == "Pod" ? document["spec"] : document["spec"]?["template"]?["spec"])
            let context = pod["securityContext"]
            #expect(context?["fsGroup"]?.intValue == 10001, "\(name)")
            #expect(context?["runAsUser"]?.intValue == 10001, "\(name)")
            #expect(context?["runAsGroup"]?.intValue == 10001, "\(name)")
            #expect(context?["runAsNonRoot"]?.boolValue == true, "\(name)")
        }
    }

    @Test("the shards' and the merge's commands, run as the manifests give them, make one merged report; shard exit 2 completes the pod")
    func commandsRunLocally() async throws {
        let job = try #require(Self.documents("shards-job.yaml").first)
        let spec = try #require(job["spec"])
        let container = try #require(spec["template"]?["spec"]?["containers"]?[0])
        let count = try #require(
            container["env"]?.arrayValue?.first { $0["name"]?.stringValue == "AUTHLOAD_SHARD_COUNT" }?["value"]?.stringValue)
        #expect(spec["completionMode"]?.stringValue == "Indexed")
        #expect(spec["completions"]?.intValue == Int(count) && spec["parallelism"]?.intValue == Int(count), "N in three places")
        #expect(container["command"]?.arrayValue?.compactMap(\.stringValue) == ["/bin/sh", "-c"])
        let script = try #require(container["args"]?[0]?.stringValue)
        let merge = try #require(Self.documents("merge-job.yaml").first?["spec"]?["template"]?["spec"]?["containers"]?[0])
        let mergeCommand = (merge["command"]?.arrayValue ?? []) + (merge["args"]?.arrayValue ?? [])

        // The ConfigMap's profile, pointed at a staging server on loopback and made short; every flag stays.
        let configMap = try #require(Self.documents("configmap.yaml").first { $0["metadata"]?["name"]?.stringValue == "authload-profile" })
        let profileText = try #require(configMap["data"]?["profile.json"]?.stringValue)
        var profile = try #require(JSONSerialization.jsonObject(with: Data(profileText.utf8)) as? [String: Any])
        var configuration = StagingConfiguration()
        configuration.fcsdk.latency = .fixed(.milliseconds(2))
        let group = try EventLoopGroup(loops: 1)
        defer { group.shutdown() }
        let staging = StagingServer(configuration: configuration)
        let server = try HTTPServer(group: group, port: 0, service: staging)
        defer { server.close() }
        profile["target"] = ["baseURL": "http://127.0.0.1:\(server.port)"]
        profile["load"] = ["users": 8, "duration": "2s", "thinkTime": "100ms", "gracefulStop": "5s"]
        // A throughput that no shard reaches alone: each shard exits 2, its pod still completes.
        profile["thresholds"] = (profile["thresholds"] as? [Any] ?? []) + [["metric": "login", "minThroughput": 30]]
        let root = (try temporaryFile("x", "") as NSString).deletingLastPathComponent
        let etc = root + "/etc/authload"
        try FileManager.default.createDirectory(atPath: etc, withIntermediateDirectories: true)
        try JSONSerialization.data(withJSONObject: profile).write(to: URL(fileURLWithPath: etc + "/profile.json"))

        func local(_ text: String) -> String {
            text.replacingOccurrences(of: "/etc/authload", with: etc).replacingOccurrences(of: "/reports", with: root + "/reports")
        }
        let start = ISO8601DateFormatter().string(from: Date().addingTimeInterval(4))
        let path = authloadBinary.deletingLastPathComponent().path + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
        let shards = try (0..<Int(count)!).map { index in
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", local(script)]
            process.environment = [
                "PATH": path, "JOB_COMPLETION_INDEX": "\(index)", "SHARD_INDEX": "\(index)", "AUTHLOAD_SHARD_COUNT": count,
                "AUTHLOAD_START_AT": start
            ]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            return process
        }
        for shard in shards {
            shard.waitUntilExit()
            #expect(shard.terminationStatus == 0, "the wrapper turns a shard's exit 2 into a completed pod")
        }
        let firstShard = try ReportWriter.load(resultJSON: root + "/reports/shard-0/result.json")
        #expect(firstShard.thresholds.last?.passed == false, "shard 0 alone misses 30 flows/s")

        let merged = JSONSchemaTool.run(
            [authloadBinary.path], mergeCommand.compactMap(\.stringValue).dropFirst().map(local))
        #expect(merged.status == 0, "\(merged.output)")
        let result = try ReportWriter.load(resultJSON: root + "/reports/merged/result.json")
        #expect(result.shards?.count == Int(count))
        #expect(result.httpRequests == staging.accessLog.total)
        #expect(result.thresholds.allSatisfy { $0.passed }, "\(result.thresholds.map(\.name))")
    }
}
