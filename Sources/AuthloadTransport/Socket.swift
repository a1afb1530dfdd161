import AuthloadCore
import CSystem
import Foundation

/// An IPv4 or IPv6 socket address, ready for `connect` or `bind`.
struct SocketAddress: Sendable {
    var storage = sockaddr_storage()
    var length: socklen_t = 0

    var family: Int32 { Int32(storage.ss_family) }

    /// Parses a numeric IPv4 or IPv6 address without touching the resolver.
    init?(numericHost host: String, port: Int) {
        var v4 = sockaddr_in()
        if inet_pton(AF_INET, host, &v4.sin_addr) == 1 {
            v4.sin_family = sa_family_t(AF_INET)
            v4.sin_port = in_port_t(UInt16(port).bigEndian)
            self.init(copying: &v4)
            return
        }
        var v6 = sockaddr_in6()
        if inet_pton(AF_INET6, host, &v6.sin6_addr) == 1 {
            v6.sin6_family = sa_family_t(AF_INET6)
            v6.sin6_port = in_port_t(UInt16(port).bigEndian)
            self.init(copying: &v6)
            return
        }
        return nil
    }

    init<T>(copying address: inout T) {
        length = socklen_t(MemoryLayout<T>.size)
        withUnsafeMutableBytes(of: &storage) { target in
            withUnsafeBytes(of: &address) { target.copyMemory(from: $0) }
        }
    }

    init(raw: UnsafePointer<sockaddr>, length: socklen_t) {
        self.length = length
        withUnsafeMutableBytes(of: &storage) { target in
            target.copyMemory(from: UnsafeRawBufferPointer(start: raw, count: Int(length)))
        }
    }

    func withSockaddr<R>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> R) -> R {
        withUnsafeBytes(of: storage) { body($0.baseAddress!.assumingMemoryBound(to: sockaddr.self), length) }
    }

    /// The numeric host, e.g. `127.0.0.2` or `::1`.
    var host: String {
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        withUnsafeBytes(of: storage) { raw in
            let offset = family == AF_INET6 ? 8 : 4
            _ = inet_ntop(family, raw.baseAddress! + offset, &text, socklen_t(text.count))
        }
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The port in host byte order.
    var port: Int {
        withUnsafeBytes(of: storage) { raw in
            // sin_port and sin6_port sit at the same offset, right after the family.
            Int(UInt16(bigEndian: raw.load(fromByteOffset: 2, as: UInt16.self)))
        }
    }

    /// The same address with another port.
    func withPort(_ port: Int) -> SocketAddress {
        var copy = self
        withUnsafeMutableBytes(of: &copy.storage) { raw in
            raw.storeBytes(of: UInt16(port).bigEndian, toByteOffset: 2, as: UInt16.self)
        }
        return copy
    }
}

enum SocketError {
    static func text(_ code: Int32) -> String { String(cString: strerror(code)) }

    /// The errno's name (`EADDRNOTAVAIL`) for the errors a load generator meets, else its number.
    static func name(_ code: Int32) -> String {
        let names: [Int32: String] = [
            EADDRNOTAVAIL: "EADDRNOTAVAIL", EADDRINUSE: "EADDRINUSE", EMFILE: "EMFILE", ENFILE: "ENFILE", ENOBUFS: "ENOBUFS",
            ENOMEM: "ENOMEM", ECONNREFUSED: "ECONNREFUSED", ECONNRESET: "ECONNRESET", ECONNABORTED: "ECONNABORTED", EPIPE: "EPIPE",
            ETIMEDOUT: "ETIMEDOUT", EHOSTUNREACH: "EHOSTUNREACH", ENETUNREACH: "ENETUNREACH", ENETDOWN: "ENETDOWN",
            EACCES: "EACCES", EPERM: "EPERM", EINVAL: "EINVAL", EAFNOSUPPORT: "EAFNOSUPPORT"
        ]
        return names[code] ?? "errno \(code)"
    }

    /// Maps a failed socket call to the transport error a flow will classify: the call, the errno by name and
    /// its text, and for the limits a load generator meets, what to change. Every part is stable, so the error
    /// breakdown groups by cause.
    ///
    /// - Parameter target: `host:port` the call was for, when it helps to say (connect).
    static func transportError(_ code: Int32, during operation: String, target: String? = nil) -> TransportError {
        switch code {
        case ECONNREFUSED: return TransportError(.connectionRefused, operation)
        case ECONNRESET, EPIPE: return TransportError(.connectionReset, operation)
        case ETIMEDOUT: return TransportError(.connectTimeout, operation)
        default: break
        }
        let cause = "\(operation): \(name(code)) (\(text(code)))"
        if code == EADDRNOTAVAIL && operation != "connect" {
            return TransportError(
                .other, "\(cause): the address is not one of this machine's: connections.sourceAddresses must name local addresses")
        }
        // What is left with advice is a limit of the generator's own, with what to change.
        let advice: String
        switch code {
        case EADDRNOTAVAIL:
            advice =
                "no free local port\(target.map { " for \($0)" } ?? ""): every closed connection holds its port in TIME_WAIT "
                + "for a minute; keep connections for the user's life (connections.lifetime \"user\"), spread them over more "
                + "source addresses (connections.sourceAddresses), or widen net.ipv4.ip_local_port_range"
        case EMFILE, ENFILE:
            advice =
                "out of file descriptors: raise `ulimit -n` (authload raises the soft limit to the hard one) or run fewer users per process"
        case ENOBUFS, ENOMEM:
            advice = "the kernel is out of socket memory: fewer connections per process, or more generators (--shard)"
        default:
            return TransportError(.other, cause)
        }
        return TransportError(.generatorLimit, "\(cause): \(advice)")
    }
}

/// Socket calls used by both the client and the server side.
enum Sockets {
    /// A new non-blocking TCP socket with Nagle off (requests are small and latency-sensitive).
    static func makeTCP(family: Int32) throws(TransportError) -> Int32 {
        // Non-blocking from the start: two `fcntl` calls fewer for every connection.
        let fd = socket(family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard fd >= 0 else { throw SocketError.transportError(errno, during: "socket") }
        OpenSockets.made.add(1, ordering: .relaxed)
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        return fd
    }

    static func text(_ code: Int32) -> String { SocketError.text(code) }

    /// A listening socket on `address`, and the port it listens on (the system's choice when asked for 0).
    ///
    /// The backlog is large: a staging server that drops connections from a full accept queue would show up
    /// as connect timeouts that are not the service's.
    static func listen(on address: SocketAddress, backlog: Int32 = 4096) throws(TransportError) -> (fd: Int32, port: Int) {
        let fd = try makeTCP(family: address.family)
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        guard address.withSockaddr({ bind(fd, $0, $1) }) == 0 else {
            let code = errno
            Glibc.close(fd)
            throw TransportError(.other, "cannot listen on \(address.host):\(address.port): \(SocketError.text(code))")
        }
        guard Glibc.listen(fd, backlog) == 0 else {
            let code = errno
            Glibc.close(fd)
            throw TransportError(.other, "listen: \(SocketError.text(code))")
        }
        var bound = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        withUnsafeMutablePointer(to: &bound) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { _ = getsockname(fd, $0, &length) }
        }
        return (fd, SocketAddress(copying: &bound).port)
    }

    /// Linux's IP_BIND_ADDRESS_NO_PORT: a bound source address takes its port at connect, from the 4-tuple, so
    /// one source address holds a port range per server address rather than one port range in all.
    private static let bindAddressNoPort: Int32 = 24
    /// Local ports tried (each taken already by another connection to the same server) before the kernel chooses.
    private static let portAttempts = 8

    /// A non-blocking TCP socket connecting to `address`: how every client connection (HTTP and WebSocket)
    /// starts. The connect completes when the socket turns writable.
    ///
    /// With `sources`, the connection comes from their next address and a local port they pick: the kernel's own
    /// choice scans for a port no connection to the same server uses, which grows costly as thousands do (28 % of
    /// the generator's CPU with 15,000 connections to one nginx). A port taken already costs one more try; after
    /// a few, the kernel chooses after all. While few connections are open and no source address is configured,
    /// the kernel chooses from the start (``SourceAddresses/leavesPortToKernel``).
    ///
    /// - Parameter target: `host:port`, for the message when no local port is free.
    static func connect(to address: SocketAddress, from sources: SourceAddresses?, target: String) throws(TransportError) -> Int32 {
        guard let sources, !sources.leavesPortToKernel else {
            return try connect(to: address, bindingTo: nil, target: target).mapError(\.error).get()
        }
        for _ in 0..<portAttempts {
            switch connect(to: address, bindingTo: sources.take(family: address.family), target: target) {
            case .success(let fd): return fd
            case .failure(let error) where error.portTaken: continue
            case .failure(let error): throw error.error
            }
        }
        return try connect(to: address, bindingTo: sources.addressOnly(family: address.family), target: target).mapError(\.error).get()
    }

    /// Why one connect attempt failed, and whether only because its local port was taken.
    struct ConnectFailure: Error {
        var error: TransportError
        var portTaken = false
    }

    private static func connect(to address: SocketAddress, bindingTo source: SocketAddress?, target: String) -> Result<
        Int32, ConnectFailure
    > {
        let fd: Int32
        do {
            fd = try makeTCP(family: address.family)
        } catch {
            return .failure(ConnectFailure(error: error))
        }
        if let source {
            var one: Int32 = 1
            if source.port != 0 {
                // A chosen port may be shared with connections to other servers: the 4-tuple is what must be unique.
                setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
            } else {
                setsockopt(fd, Int32(IPPROTO_IP), bindAddressNoPort, &one, socklen_t(MemoryLayout<Int32>.size))
            }
            guard source.withSockaddr({ bind(fd, $0, $1) }) == 0 else {
                let code = errno
                Glibc.close(fd)
                return .failure(
                    ConnectFailure(
                        error: SocketError.transportError(code, during: "bind \(source.host)"),
                        portTaken: source.port != 0 && code == EADDRINUSE))
            }
        }
        if address.withSockaddr({ Glibc.connect(fd, $0, $1) }) != 0 && errno != EINPROGRESS {
            let code = errno
            Glibc.close(fd)
            return .failure(
                ConnectFailure(
                    error: SocketError.transportError(code, during: "connect", target: target),
                    portTaken: (source?.port ?? 0) != 0 && code == EADDRNOTAVAIL))
        }
        return .success(fd)
    }

    /// Makes closing `fd` reset the connection (SO_LINGER with a zero timeout) instead of the FIN handshake that
    /// leaves the closing side holding the 4-tuple in TIME_WAIT for a minute.
    ///
    /// For a client connection closed while idle: HTTP/1.1 lets a client drop an idle connection at any time,
    /// nothing is in flight to lose, and the server ends up with no state either way (the side that closes first
    /// is the one that waits). Without it, a generator that logs in thousands of times a second over a new
    /// connection each time holds tens of thousands of TIME_WAIT sockets, and the kernel's search for a free
    /// local port at every connect grows with them (42 % of the generator's CPU at 50,000 users).
    static func resetOnClose(_ fd: Int32) {
        var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
        setsockopt(fd, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
    }

    /// Raises the open-file limit to the hard limit: thousands of users hold thousands of sockets.
    @discardableResult
    static func raiseFileLimit() -> Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 0 }
        if limit.rlim_cur < limit.rlim_max {
            limit.rlim_cur = limit.rlim_max
            setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        }
        return Int(limit.rlim_cur)
    }
}

/// Resolves host names off the event loops, once per name and port for the life of the transport.
///
/// A load test targets a handful of names; re-resolving per request would measure the resolver.
final class Resolver: Sendable {
    private let cache = Locked<[String: SocketAddress]>([:])
    private let queue = DispatchQueue(label: "authload.resolver")

    /// - Parameter isolation: the caller's; a cached name is answered without leaving it.
    func resolve(host: String, port: Int, isolation: isolated (any Actor)? = #isolation) async throws(TransportError) -> SocketAddress {
        let key = "\(host):\(port)"
        if let cached = cache.withLock({ $0[key] }) { return cached }
        if let numeric = SocketAddress(numericHost: host, port: port) {
            cache.withLock { $0[key] = numeric }
            return numeric
        }
        let result: Result<SocketAddress, TransportError> = await withCheckedContinuation(isolation: isolation) { continuation in
            queue.async { continuation.resume(returning: Self.lookUp(host: host, port: port)) }
        }
        let address = try result.get()
        cache.withLock { $0[key] = address }
        return address
    }

    private static func lookUp(host: String, port: Int) -> Result<SocketAddress, TransportError> {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_family = AF_UNSPEC
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0, let first = list else {
            return .failure(TransportError(.nameResolution, "\(host): \(String(cString: gai_strerror(status)))"))
        }
        defer { freeaddrinfo(list) }
        return .success(SocketAddress(raw: first.pointee.ai_addr, length: first.pointee.ai_addrlen))
    }
}
