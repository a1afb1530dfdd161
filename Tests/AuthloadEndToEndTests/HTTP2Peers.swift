import AuthloadCore
import AuthloadTransport
import Foundation
import Testing

/// HTTP/2 servers that are not ours, for the client's interop tests: nginx (Debian's `nginx`, with its http2 module),
/// `nghttpd` (`nghttp2-server`) and a Python server on the `h2` package (`python3-h2`), which `.ci/run` installs.
enum HTTP2Peers {
    static func find(_ name: String) -> String? {
        ["/usr/sbin/\(name)", "/usr/bin/\(name)", "/usr/local/sbin/\(name)", "/usr/local/bin/\(name)"]
            .first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    static let nginx = find("nginx")
    static let nghttpd = find("nghttpd")
    /// A Python that can import `h2`: Debian's own first, then whatever `python3` is on PATH.
    static let python: [String]? = [["/usr/bin/python3"], ["/usr/bin/env", "python3"]].first { command in
        FileManager.default.isExecutableFile(atPath: command[0]) && IsolatedPython.run(command, ["-c", "import h2"]).status == 0
    }

    /// A port nothing listens on right now.
    static func freePort() throws -> Int {
        let group = try EventLoopGroup(loops: 1)
        defer { group.shutdown() }
        return try PrometheusTools.freePort(group)
    }

    /// A certificate for 127.0.0.1, written as PEM files into `directory`: (certificate, key) paths.
    static func certificate(in directory: String) throws -> (identity: TLSIdentity, certificate: String, key: String) {
        let identity = try TLSIdentity.selfSigned(hostnames: ["localhost"], ipAddresses: ["127.0.0.1"])
        let certificate = (directory as NSString).appendingPathComponent("cert.pem")
        let key = (directory as NSString).appendingPathComponent("key.pem")
        try identity.certificatePEM.write(toFile: certificate, atomically: true, encoding: .utf8)
        try identity.privateKeyPEM.write(toFile: key, atomically: true, encoding: .utf8)
        return (identity, certificate, key)
    }

    /// A client of a transport with `http` and `policy`, trusting `identity` when given, for `endpoint`.
    static func client(
        _ group: EventLoopGroup, _ endpoint: Endpoint, http: HTTPVersionChoice,
        policy: ConnectionSettings.Policy = ConnectionSettings.defaultPolicy, trusting identity: TLSIdentity? = nil
    ) -> any HTTPClient {
        var settings = ConnectionSettings(policy: policy)
        settings.http = http
        let tls = TLSClientConfiguration(trustedCertificatesPEM: identity.map { [$0.certificatePEM] } ?? [])
        return SocketTransport(group: group, configuration: SocketTransportConfiguration(connections: settings, tls: tls))
            .makeClient(for: endpoint)
    }

    /// Waits until something accepts connections on 127.0.0.1:`port`, for at most 5 s: a peer started as a process says
    /// nothing when it is ready.
    static func waitForListener(on port: Int) async throws {
        for _ in 0..<100 {
            if let probe = try? RawSocket.connect(port: port) {
                probe.close()
                return
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        Issue.record("nothing listens on port \(port) after 5 s")
    }

    /// Sends `count` requests made by `request` at once on `client`; their results, in order.
    static func concurrently(
        _ count: Int, on client: any HTTPClient, timeout: Duration = .seconds(10), _ request: @escaping @Sendable (Int) -> HTTPRequest
    ) async -> [Result<HTTPResponse, any Error>] {
        await withTaskGroup(of: (Int, Result<HTTPResponse, any Error>).self) { group in
            for index in 0..<count {
                group.addTask {
                    do {
                        return (index, .success(try await client.execute(request(index), timeout: timeout)))
                    } catch {
                        return (index, .failure(error))
                    }
                }
            }
            var results: [Result<HTTPResponse, any Error>?] = Array(repeating: nil, count: count)
            for await (index, result) in group { results[index] = result }
            return results.map { $0! }
        }
    }
}

/// An nginx of its own, in the foreground, with the `server` blocks given; stopped by ``stop()``.
final class NginxPeer: Sendable {
    let directory: String
    private let process = Process()

    /// - Parameters:
    ///   - servers: the `server { … }` blocks; `$DIR` in them is the peer's directory (its docroot and logs).
    ///   - prepare: writes what nginx reads at start (certificates) into the directory.
    init(_ nginx: String, servers: String, prepare: (String) throws -> Void = { _ in }) throws {
        directory = try scratchDirectory("nginx")
        // The worker runs as an unprivileged user when the tests run as root: it must read the docroot.
        for path in [directory, (directory as NSString).deletingLastPathComponent] {
            try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: path)
        }
        let config = """
            worker_processes 1;
            pid \(directory)/nginx.pid;
            error_log \(directory)/error.log;
            events { worker_connections 1024; }
            http {
                access_log \(directory)/access.log;
                default_type application/octet-stream;
                \(servers.replacingOccurrences(of: "$DIR", with: directory))
            }
            """
        try config.write(toFile: "\(directory)/nginx.conf", atomically: true, encoding: .utf8)
        try prepare(directory)
        process.executableURL = URL(fileURLWithPath: nginx)
        process.arguments = ["-c", "\(directory)/nginx.conf", "-p", directory, "-e", "\(directory)/error.log", "-g", "daemon off;"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
    }

    /// Writes a file nginx serves at `/name`.
    func serve(_ name: String, _ bytes: [UInt8]) throws {
        try Data(bytes).write(to: URL(fileURLWithPath: "\(directory)/\(name)"))
    }

    /// The access log once it holds `count` lines, or as it is after 2 s: nginx logs a request after its response
    /// has gone, so a client that has the response may look before the line is written.
    func accessLog(reaching count: Int) async -> [String] {
        for _ in 0..<100 {
            let log = accessLog
            if log.count >= count { return log }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return accessLog
    }

    /// The access log's lines so far.
    var accessLog: [String] {
        ((try? String(contentsOfFile: "\(directory)/access.log", encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }

    func stop() {
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
    }
}
