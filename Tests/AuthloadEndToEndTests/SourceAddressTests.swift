import AuthloadCore
import Foundation
import Testing

@testable import AuthloadTransport

/// A Python 3, for its standard library's HTTP server.
private let python3 = ["/usr/bin/python3", "/usr/local/bin/python3"].first { FileManager.default.isExecutableFile(atPath: $0) }

/// `connections.sourceAddresses`, and socket errors that name their cause and what to change.
@Suite("Source addresses and socket errors", .serialized, .timeLimit(.minutes(1)))
struct SourceAddressTests {
    @Test(
        "connections go out from each source address in turn, as a real server sees them", .enabled(if: python3 != nil || Interop.required))
    func sourceAddressesInTurn() async throws {
        let python = [try #require(python3, "AUTHLOAD_REQUIRE_INTEROP=1, but no python3")]
        let group = try EventLoopGroup(loops: 1)
        defer { group.shutdown() }
        let port = try PrometheusTools.freePort(group)
        // Python's own HTTP server: it logs each request's client address ("127.0.0.2 - - [...] "GET / ...").
        // Isolated, in a directory of its own: a stray http.py or types.py must not stand in for the standard library.
        let server = try IsolatedPython.process(python, ["-u", "-m", "http.server", "--bind", "127.0.0.1", String(port)])
        // What a shared /tmp may hold at any time; in isolated mode Python never imports it.
        for module in ["http.py", "types.py"] {
            try "raise SystemExit('shadowed the standard library')\n".write(
                to: server.currentDirectoryURL!.appendingPathComponent(module), atomically: true, encoding: .utf8)
        }
        let log = Pipe()
        let ready = Pipe()
        server.standardError = log
        server.standardOutput = ready
        try server.run()
        // SIGKILL: a child of the test process may inherit a mask that blocks SIGTERM.
        defer { kill(server.processIdentifier, SIGKILL) }
        // It says "Serving HTTP on …" once it listens (-u: unbuffered); no retrying on a timer until then.
        var banner = ""
        while !banner.contains("Serving HTTP") {
            let data = ready.fileHandleForReading.availableData
            guard !data.isEmpty else { break }
            banner += String(decoding: data, as: UTF8.self)
        }
        #expect(banner.contains("Serving HTTP"), "\(banner)")
        let transport = SocketTransport(
            group: group,
            configuration: SocketTransportConfiguration(
                connections: ConnectionSettings(sourceAddresses: ["127.0.0.2", "127.0.0.3", "127.0.0.4"])))
        var answered = 0
        for attempt in 0..<6 {
            // A new client per request: a new connection, the next source address.
            let client = transport.makeClient(for: Endpoint(host: "127.0.0.1", port: port))
            defer { client.shutdown() }
            let response = try await client.execute(HTTPRequest(method: "GET", target: "/?n=\(attempt)"), timeout: .seconds(5))
            #expect(response.status == 200)
            answered += 1
        }
        #expect(answered == 6)
        kill(server.processIdentifier, SIGKILL)
        server.waitUntilExit()
        let text = String(decoding: log.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let peers = text.split(separator: "\n").filter { $0.contains("\"GET /?n=") }.map { String($0.prefix { $0 != " " }) }
        #expect(peers.count == 6)
        #expect(Set(peers) == ["127.0.0.2", "127.0.0.3", "127.0.0.4"], "\(peers)")
    }

    @Test("a source address that is not this machine's fails with the call, the errno and what to change")
    func foreignSourceAddress() async throws {
        let group = try EventLoopGroup(loops: 1)
        defer { group.shutdown() }
        let transport = SocketTransport(
            group: group, configuration: SocketTransportConfiguration(connections: ConnectionSettings(sourceAddresses: ["192.0.2.1"])))
        let client = transport.makeClient(for: Endpoint(host: "127.0.0.1", port: 9))
        defer { client.shutdown() }
        let error = try await #require(throws: TransportError.self) {
            try await client.execute(HTTPRequest(method: "GET", target: "/"), timeout: .seconds(5))
        }
        // The transport names the call, the errno and what is wrong, typed; the report adds the key that fixes it.
        #expect(
            error.description
                == "socket error: bind 192.0.2.1: EADDRNOTAVAIL (Cannot assign requested address): the address is not one of this "
                + "machine's")
        #expect(error.reason == .sourceAddressNotLocal)
        #expect(error.systemCall == TransportError.SystemCall("bind", code: EADDRNOTAVAIL))
        #expect(
            Outcome(error).detail
                == "socket error: bind 192.0.2.1: EADDRNOTAVAIL (Cannot assign requested address): the address is not one of this "
                + "machine's: connections.sourceAddresses must name local addresses")
        #expect(SocketTransportConfiguration.invalidSourceAddress(in: ["127.0.0.2", "::1", "host.example"])! == (2, "host.example"))
    }

    @Test("the limits a load generator meets are named by errno, typed, with the fix in the report; other errnos by name and text")
    func errnoAdvice() {
        let ports = TransportError.socket(IOError(EADDRNOTAVAIL, call: "connect"), .connecting, target: "127.0.0.1:18080")
        // The generator's own limits are a kind of their own: the server is not to blame, and nothing was sent.
        #expect(ports.kind == .generatorLimit && ports.reason == .noFreeLocalPort)
        #expect(ports.systemCall == TransportError.SystemCall("connect", code: EADDRNOTAVAIL))
        let files = TransportError.socket(IOError(EMFILE, call: "socket"), .opening)
        #expect(files.kind == .generatorLimit && files.reason == .outOfFileDescriptors)
        let unreachable = TransportError.socket(IOError(ENETUNREACH, call: "connect"), .connecting)
        #expect(unreachable.kind == .other && unreachable.reason == .unreachable && unreachable.isConnectionFailure)
        #expect(ports.detail == "connect: EADDRNOTAVAIL (Cannot assign requested address): no free local port for 127.0.0.1:18080")
        #expect(
            Outcome(ports).detail
                == "generator limit: connect: EADDRNOTAVAIL (Cannot assign requested address): no free local port for 127.0.0.1:18080: "
                + "every closed connection holds its port in TIME_WAIT for a minute; keep connections for the user's life "
                + "(connections.lifetime \"user\"), spread them over more source addresses (connections.sourceAddresses), or widen "
                + "net.ipv4.ip_local_port_range")
        #expect(files.detail == "socket: EMFILE (Too many open files): out of file descriptors")
        #expect(
            Outcome(files).detail.hasPrefix(
                "generator limit: socket: EMFILE (Too many open files): out of file descriptors: raise `ulimit -n`"))
        #expect(unreachable.detail == "connect: ENETUNREACH (Network is unreachable)")
        // Past the connect, an errno nothing names is a failed call, not an unreachable target.
        let other = TransportError.socket(IOError(ENETUNREACH, call: "recv"), .transferring)
        #expect(other.reason == .systemCallFailed && !other.isConnectionFailure)
        #expect(
            TransportError.socket(IOError(ECONNREFUSED, call: "connect"), .connecting)
                == TransportError(.refused, "connect", systemCall: TransportError.SystemCall("connect", code: ECONNREFUSED)))
    }

    @Test("connections take local ports in turn over the range, and the source addresses in turn")
    func portsInTurn() throws {
        let sources = SourceAddresses(["127.0.0.2", "127.0.0.3"], ports: 40_000...40_002)
        let taken = (0..<4).map { _ in sources.take(family: AF_INET) }
        #expect(taken.map(\.host) == ["127.0.0.2", "127.0.0.3", "127.0.0.2", "127.0.0.3"])
        // Consecutive ports from a random start, wrapping within the range.
        for (a, b) in zip(taken, taken.dropFirst()) { #expect(b.port == (a.port == 40_002 ? 40_000 : a.port + 1)) }
        #expect(sources.addressOnly(family: AF_INET)?.port == 0)
        let none = SourceAddresses([], ports: 50_000...50_000)
        #expect(none.take(family: AF_INET).host == "0.0.0.0" && none.take(family: AF_INET).port == 50_000)
        #expect(none.take(family: AF_INET6).host == "::")
        #expect(none.addressOnly(family: AF_INET) == nil)
    }

    @Test("a connection comes from a port it was given; a port in use costs one more try")
    func takenPortIsSkipped() throws {
        // A listener holds a port that no other socket may bind, whatever SO_REUSEADDR says.
        let listener = try RawListener()
        defer { listener.close() }
        let held = listener.port
        let address = try #require(SocketAddress(numericHost: "127.0.0.1", port: held))
        // kernelPortsBelow 0: authload hands out the port however few connections are open.
        let sources = SourceAddresses([], ports: held...held + 1, kernelPortsBelow: 0)
        let fd = try Sockets.connect(to: address, from: sources, target: "127.0.0.1:\(held)")
        defer { close(fd) }
        #expect(localPort(fd) != held)
    }

    @Test("with no source address and few connections open the kernel picks the port; past the limit authload does")
    func kernelPortWhileFew() throws {
        let listener = try RawListener()
        defer { listener.close() }
        let address = try #require(SocketAddress(numericHost: "127.0.0.1", port: listener.port))
        // Below every ephemeral range: the kernel never picks it, so whichever connection has it got it from authload.
        let ours = 1_500...1_500
        let few = try Sockets.connect(to: address, from: SourceAddresses([], ports: ours), target: "127.0.0.1:\(listener.port)")
        defer { close(few) }
        #expect(localPort(few) != 1_500 && SourceAddresses.ephemeralPorts().contains(localPort(few)))
        let many = SourceAddresses([], ports: ours, kernelPortsBelow: 0)
        let fd = try Sockets.connect(to: address, from: many, target: "127.0.0.1:\(listener.port)")
        defer { close(fd) }
        #expect(localPort(fd) == 1_500)
        // A configured source address is always bound, however few connections are open.
        #expect(!SourceAddresses(["127.0.0.2"]).leavesPortToKernel && SourceAddresses([]).leavesPortToKernel)
    }

    private func localPort(_ fd: Int32) -> Int {
        var local = sockaddr_storage()
        var localLength = socklen_t(MemoryLayout<sockaddr_storage>.size)
        _ = withUnsafeMutableBytes(of: &local) { getsockname(fd, $0.baseAddress!.assumingMemoryBound(to: sockaddr.self), &localLength) }
        return withUnsafeBytes(of: local) { Int(UInt16(bigEndian: $0.load(fromByteOffset: 2, as: UInt16.self))) }
    }
}
