import AuthloadCore
import Foundation

/// Where a transport's connections come from: its source addresses in turn (the unspecified address when there are
/// none), each time with the next local port of the system's ephemeral range,
/// so that a connect need not search for a free one (``Sockets/connect(to:from:target:)``). With no source
/// addresses and few connections open, the kernel picks instead (``leavesPortToKernel``).
final class SourceAddresses: Sendable {
    private let addresses: [SocketAddress]
    private let ports: ClosedRange<Int>
    private let kernelPortsBelow: Int
    private let next = Locked((address: 0, port: 0))

    /// Invalid addresses are left out (the profile checked them).
    ///
    /// - Parameter kernelPortsBelow: how many client connections may be open while the kernel still picks the
    ///   local port of a new one (with no source addresses).
    init(_ texts: [String], ports: ClosedRange<Int> = SourceAddresses.ephemeralPorts(), kernelPortsBelow: Int = 1_000) {
        addresses = texts.compactMap { SocketAddress(numericHost: $0, port: 0) }
        self.ports = ports
        self.kernelPortsBelow = kernelPortsBelow
        // Each process starts at its own point of the range, so shards on one machine do not follow each other.
        next.withLock { $0.port = Int.random(in: 0..<ports.count) }
    }

    /// Whether a connect may leave the local address and port to the kernel: no source addresses are configured, and
    /// the process holds fewer client connections than `kernelPortsBelow`.
    ///
    /// The kernel's search for a free port grows with the connections open to the same server (which is why authload
    /// hands out ports itself), but with a few hundred open it costs less than the `SO_REUSEADDR` and `bind` of a port
    /// of our own (docs/development.md, "Measured design choices"). Ports the kernel chose and ports handed out here may meet on one server address; the connect that
    /// finds its port taken tries the next.
    var leavesPortToKernel: Bool {
        addresses.isEmpty
            && OpenSockets.http.load(ordering: .relaxed) + OpenSockets.webSockets.load(ordering: .relaxed) < kernelPortsBelow
    }

    /// The next address and port to connect from toward an address of `family`.
    func take(family: Int32) -> SocketAddress {
        let (address, port) = next.withLock { turn in
            defer { turn = ((turn.address + 1) % max(addresses.count, 1), (turn.port + 1) % ports.count) }
            return (turn.address, ports.lowerBound + turn.port)
        }
        return (addresses.isEmpty ? Self.unspecified(family) : addresses[address]).withPort(port)
    }

    /// The next address with no port (the kernel picks one at connect), or nil when there are no addresses.
    func addressOnly(family: Int32) -> SocketAddress? {
        addresses.isEmpty ? nil : take(family: family).withPort(0)
    }

    private static let anyIPv4 = SocketAddress(numericHost: "0.0.0.0", port: 0)!
    private static let anyIPv6 = SocketAddress(numericHost: "::", port: 0)!

    private static func unspecified(_ family: Int32) -> SocketAddress { family == AF_INET6 ? anyIPv6 : anyIPv4 }

    /// The system's ephemeral port range (`net.ipv4.ip_local_port_range`; Linux's default when unreadable).
    static func ephemeralPorts() -> ClosedRange<Int> {
        let text = (try? String(contentsOfFile: "/proc/sys/net/ipv4/ip_local_port_range", encoding: .utf8)) ?? ""
        let bounds = text.split(whereSeparator: \.isWhitespace).compactMap { Int($0) }
        guard bounds.count == 2, bounds[0] > 0, bounds[0] < bounds[1], bounds[1] <= 65535 else { return 32768...60999 }
        return bounds[0]...bounds[1]
    }
}
