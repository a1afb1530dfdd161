import AuthloadCore
import AuthloadStaging
import AuthloadTransport
import Foundation
import Testing

/// HTTP/2 clients that are not ours against the embedded server: nghttp and h2load (Debian's `nghttp2-client`) and
/// a Python client on the `h2` package (`python3-h2`), which raises on any protocol error.
enum HTTP2ClientPeers {
    static let nghttp = PrometheusTools.find("nghttp")
    static let h2load = PrometheusTools.find("h2load")
    /// A Python that can import `h2`: Debian's own first, then whatever `python3` is on PATH.
    static let python: [String]? = {
        for candidate in [["/usr/bin/python3"], ["/usr/bin/env", "python3"]]
        where FileManager.default.isExecutableFile(atPath: candidate[0]) && IsolatedPython.run(candidate, ["-c", "import h2"]).status == 0 {
            return candidate
        }
        return nil
    }()

    static func require(_ tool: String?, _ name: String) throws -> String {
        try #require(tool, "AUTHLOAD_REQUIRE_INTEROP=1, but \(name) is missing: apt-get install nghttp2-client")
    }

    /// Runs a tool to its end: its exit status and what it wrote to stdout and stderr.
    static func run(_ tool: String, _ arguments: [String]) async throws -> (status: Int32, output: String) {
        let output = try scratchDirectory("h2-peer") + "/output.txt"
        let process = try SpawnedProcess(tool, arguments, stdout: output, stderr: output)
        let status = await process.exitStatus()
        return (status, (try? String(contentsOfFile: output, encoding: .utf8)) ?? "")
    }
}

@Suite("HTTP/2 interop: the embedded server with nghttp, h2load and Python h2", .serialized, .timeLimit(.minutes(2)))
struct HTTP2ServerInteropTests {
    /// The staging server on 127.0.0.1, over TLS (ALPN) or plain (h2c with prior knowledge), while `body` runs.
    func withServer(tls: Bool, _ body: (_ base: String, _ staging: StagingServer) async throws -> Void) async throws {
        let group = try EventLoopGroup(loops: 2)
        defer { group.shutdown() }
        let staging = StagingServer(configuration: StagingConfiguration())
        let context =
            try tls ? TLSServerContext(identity: TLSIdentity.selfSigned(hostnames: ["localhost"], ipAddresses: ["127.0.0.1"])) : nil
        let server = try HTTPServer(group: group, port: 0, service: staging, tls: context)
        defer { server.close() }
        #expect(server.acceptedProtocols == (tls ? "h2, http/1.1 (ALPN)" : "http/1.1, h2c (prior knowledge)"))
        try await body("\(tls ? "https" : "http")://127.0.0.1:\(server.port)", staging)
    }

    @Test(
        "nghttp gets every answer over HTTP/2, chosen by ALPN on TLS, and the access log counts each request",
        .enabled(if: HTTP2ClientPeers.nghttp != nil || Interop.required), arguments: [false, true])
    func nghttp(tls: Bool) async throws {
        let nghttp = try HTTP2ClientPeers.require(HTTP2ClientPeers.nghttp, "nghttp")
        try await withServer(tls: tls) { base, staging in
            let urls = (0..<5).map { "\(base)/health?n=\($0)" }
            let (status, output) = try await HTTP2ClientPeers.run(nghttp, ["-v", "-n", "-t", "10"] + urls)
            #expect(status == 0, "\(output)")
            #expect(output.components(separatedBy: ":status: 200").count - 1 == urls.count, "\(output)")
            if tls { #expect(output.contains("The negotiated protocol: h2"), "\(output)") }
            #expect(!output.contains("GOAWAY") || output.contains("error_code=NO_ERROR"), "\(output)")
            #expect(staging.accessLog.total == urls.count)
        }
    }

    @Test(
        "h2load's requests, ten streams at a time on each of three connections, all succeed and all are counted",
        .enabled(if: HTTP2ClientPeers.h2load != nil || Interop.required), arguments: [false, true])
    func h2load(tls: Bool) async throws {
        let h2load = try HTTP2ClientPeers.require(HTTP2ClientPeers.h2load, "h2load")
        try await withServer(tls: tls) { base, staging in
            let (status, output) = try await HTTP2ClientPeers.run(
                h2load, ["-n", "600", "-c", "3", "-m", "10", "-T", "10", "\(base)/health"])
            #expect(status == 0, "\(output)")
            #expect(output.contains("requests: 600 total, 600 started, 600 done, 600 succeeded, 0 failed, 0 errored"), "\(output)")
            #expect(output.contains("status codes: 600 2xx"), "\(output)")
            if tls { #expect(output.contains("Application protocol: h2"), "\(output)") }
            #expect(staging.accessLog.total == 600)
        }
    }

    @Test(
        "Python h2 sends a header block over CONTINUATION, 1 MB through the server's window and ten streams at once",
        .enabled(if: HTTP2ClientPeers.python != nil || Interop.required), arguments: [false, true])
    func pythonH2(tls: Bool) async throws {
        let python = try #require(
            HTTP2ClientPeers.python, "AUTHLOAD_REQUIRE_INTEROP=1, but no python3 can import h2: apt-get install python3-h2")
        try await withServer(tls: tls) { base, staging in
            let port = String(base.split(separator: ":").last!)
            let script = Interop.scripts.appendingPathComponent("h2_client.py").path
            let (status, output) = IsolatedPython.run(python, [script, "127.0.0.1", port, tls ? "tls" : "plain"])
            #expect(status == 0, "\(output)")
            let report = try JSONValue.parse(String(output.split(separator: "\n").last ?? ""))
            let statuses = try #require(report["statuses"]?.objectValue, "\(output)")
            let answered = Array(statuses)
            #expect(answered.count == 12)
            #expect(answered.allSatisfy { $0.value.intValue == 200 }, "\(output)")
            #expect((report["continuations"]?.intValue ?? 0) >= 1, "the 40 KB header block went out whole")
            #expect(report["bodyBytes"]?.intValue == 1_048_576)
            if tls { #expect(report["alpn"]?.stringValue == "h2") }
            #expect(staging.accessLog.total == 12)
            #expect(staging.accessLog.byRoute["POST /health"] == 1)
        }
    }

    @Test(
        "a TLS client that offers only http/1.1 by ALPN gets it, and an HTTP/1.1 answer",
        .enabled(if: HTTP2ClientPeers.python != nil || Interop.required))
    func alpnHTTP1() async throws {
        let python = try #require(
            HTTP2ClientPeers.python, "AUTHLOAD_REQUIRE_INTEROP=1, but no python3 can import h2: apt-get install python3-h2")
        try await withServer(tls: true) { base, staging in
            let port = String(base.split(separator: ":").last!)
            let script = Interop.scripts.appendingPathComponent("h2_client.py").path
            let (status, output) = IsolatedPython.run(python, [script, "127.0.0.1", port, "tls-http1"])
            #expect(status == 0, "\(output)")
            let report = try JSONValue.parse(String(output.split(separator: "\n").last ?? ""))
            #expect(report["alpn"]?.stringValue == "http/1.1", "\(output)")
            #expect(report["statusLine"]?.stringValue == "HTTP/1.1 200 OK", "\(output)")
            #expect(staging.accessLog.total == 1)
        }
    }
}
