import AuthloadCore
import CSystem
import Foundation

enum SocketStep {
    /// Making the socket, setting its options, binding it to a source address.
    case opening
    /// The connect, until the socket turns writable (a first write on a socket still connecting included).
    case connecting
    /// Reading and writing an open connection.
    case transferring
}

extension TransportError {
    /// Maps a failed socket call to the transport error a flow will classify: a typed reason, the call and its errno,
    /// and a detail that says the call, the errno by name and its text, and what that means for a load generator.
    /// Every part is stable, so the error breakdown groups by cause. What to change is not said here: the layer that
    /// knows the profile maps the reason to the key that fixes it.
    ///
    /// - Parameters:
    ///   - operation: the call as the detail names it, when it says more than the call's name (`bind 192.0.2.1`, or
    ///     `connect` for a first write that met the connect's failure).
    ///   - target: `host:port` the call was for, when it helps to say (connect).
    static func socket(_ error: IOError, _ step: SocketStep, operation: String? = nil, target: String? = nil) -> TransportError {
        let operation = operation ?? error.call
        let system = error.systemCall
        let code = error.code
        switch code {
        case ECONNREFUSED: return TransportError(.refused, operation, systemCall: system)
        case ECONNRESET, EPIPE: return TransportError(.reset, operation, systemCall: system)
        case ETIMEDOUT: return TransportError(.timedOut(.connecting), operation, systemCall: system)
        default: break
        }
        let cause = "\(operation): \(SystemErrno.name(code)) (\(SystemErrno.text(code)))"
        switch (code, step) {
        case (EADDRNOTAVAIL, .connecting):
            return TransportError(.noFreeLocalPort, "\(cause): no free local port\(target.map { " for \($0)" } ?? "")", systemCall: system)
        case (EADDRNOTAVAIL, _):
            return TransportError(.sourceAddressNotLocal, "\(cause): the address is not one of this machine's", systemCall: system)
        case (EMFILE, _), (ENFILE, _): return TransportError(.outOfFileDescriptors, "\(cause): out of file descriptors", systemCall: system)
        case (ENOBUFS, _), (ENOMEM, _):
            return TransportError(.outOfSocketMemory, "\(cause): the kernel is out of socket memory", systemCall: system)
        case (_, .connecting): return TransportError(.unreachable, cause, systemCall: system)
        default: return TransportError(.systemCallFailed, cause, systemCall: system)
        }
    }
}

/// Socket calls used by both the client and the server side.
enum Sockets {
    /// A new non-blocking TCP socket with Nagle off (requests are small and latency-sensitive).
    static func makeTCP(family: Int32) throws(TransportError) -> Int32 {
        do throws(IOError) {
            // Non-blocking from the start: two `fcntl` calls fewer for every connection.
            let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue)
            guard case .processed(let fd) = try syscall(blocking: false, where: "socket", { socket(family, type, 0) }) else {
                preconditionFailure("a blocking call would not block")
            }
            OpenSockets.made.add(1, ordering: .relaxed)
            do throws(IOError) {
                try SystemCalls.setOption(fd, Int32(IPPROTO_TCP), TCP_NODELAY, 1, "setsockopt(TCP_NODELAY)")
            } catch {
                SystemCalls.close(fd)
                throw error
            }
            return fd
        } catch {
            throw TransportError.socket(error, .opening)
        }
    }

    /// A listening socket on `address`, and the port it listens on (the system's choice when asked for 0).
    ///
    /// The backlog is large: a staging server that drops connections from a full accept queue would show up
    /// as connect timeouts that are not the service's.
    static func listen(on address: SocketAddress, backlog: Int32 = 4096) throws(TransportError) -> (fd: Int32, port: Int) {
        let fd = try makeTCP(family: address.family)
        do throws(IOError) {
            try SystemCalls.setOption(fd, SOL_SOCKET, SO_REUSEADDR, 1, "setsockopt(SO_REUSEADDR)")
            _ = try address.withSockaddr { raw, length throws(IOError) in
                try syscall(blocking: false, where: "bind") { bind(fd, raw, length) }
            }
            _ = try syscall(blocking: false, where: "listen") { Glibc.listen(fd, backlog) }
            var bound = sockaddr_storage()
            var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
            _ = try withUnsafeMutablePointer(to: &bound) { pointer throws(IOError) in
                try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw throws(IOError) in
                    try syscall(blocking: false, where: "getsockname") { getsockname(fd, raw, &length) }
                }
            }
            return (fd, SocketAddress(copying: &bound).port)
        } catch {
            SystemCalls.close(fd)
            throw TransportError(
                .systemCallFailed, "cannot listen on \(address.host):\(address.port): \(error)", systemCall: error.systemCall)
        }
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
    /// choice scans for a port no connection to the same server uses, which grows costly as thousands do
    /// (docs/development.md). A port taken already costs one more try; after
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
            do throws(IOError) {
                if source.port != 0 {
                    // A chosen port may be shared with connections to other servers: the 4-tuple is what must be unique.
                    try SystemCalls.setOption(fd, SOL_SOCKET, SO_REUSEADDR, 1, "setsockopt(SO_REUSEADDR)")
                } else {
                    try SystemCalls.setOption(fd, Int32(IPPROTO_IP), bindAddressNoPort, 1, "setsockopt(IP_BIND_ADDRESS_NO_PORT)")
                }
                _ = try source.withSockaddr { raw, length throws(IOError) in
                    try syscall(blocking: false, where: "bind") { bind(fd, raw, length) }
                }
            } catch {
                SystemCalls.close(fd)
                return .failure(
                    ConnectFailure(
                        error: TransportError.socket(error, .opening, operation: "\(error.call) \(source.host)"),
                        portTaken: source.port != 0 && error.code == EADDRINUSE))
            }
        }
        do throws(IOError) {
            // Non-blocking: EINPROGRESS is the usual answer, and the socket turns writable once connected.
            _ = try address.withSockaddr { raw, length throws(IOError) in
                try syscall(blocking: true, where: "connect") { Glibc.connect(fd, raw, length) }
            }
        } catch {
            SystemCalls.close(fd)
            return .failure(
                ConnectFailure(
                    error: TransportError.socket(error, .connecting, target: target),
                    portTaken: (source?.port ?? 0) != 0 && error.code == EADDRNOTAVAIL))
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
    /// local port at every connect grows with them until it dominates the generator's CPU (docs/development.md).
    ///
    /// - Throws: when the option could not be set; the connection then closes as usual, with a FIN.
    static func resetOnClose(_ fd: Int32) throws(IOError) {
        try SystemCalls.setOption(fd, SOL_SOCKET, SO_LINGER, Glibc.linger(l_onoff: 1, l_linger: 0), "setsockopt(SO_LINGER)")
    }

    /// Raises the open-file limit to the hard limit: thousands of users hold thousands of sockets.
    ///
    /// - Returns: the soft limit now in force; 0 when it could not be read.
    @discardableResult
    static func raiseFileLimit() -> Int {
        var limit = rlimit()
        guard (try? syscall(blocking: false, where: "getrlimit", { getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) })) != nil else {
            return 0
        }
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max
            // Refused (a container's policy, say): the soft limit stays, and that is what the caller is told.
            if (try? syscall(blocking: false, where: "setrlimit", { setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) })) != nil {
                limit = raised
            }
        }
        return Int(limit.rlim_cur)
    }
}
