import AuthloadCore
import AuthloadWire

/// What the socket transport is given: the run's connection settings whole, and the TLS trust material they name,
/// read from its files once by whoever read the profile.
public struct SocketTransportConfiguration: Sendable {
    /// Who owns connections, their timeouts, where they come from: the transport reads them here and nowhere else.
    public var connections: ConnectionSettings
    /// The trust material the settings name, loaded; how the transport checks https endpoints.
    public var tls: TLSClientConfiguration

    public init(connections: ConnectionSettings = ConnectionSettings(), tls: TLSClientConfiguration = TLSClientConfiguration()) {
        self.connections = connections
        self.tls = tls
    }

    var connectTimeout: Duration { connections.connectTimeout }
    var idleTimeout: Duration { connections.idleTimeout }

    /// The first source address that is no numeric IPv4 or IPv6 address, with its position; nil when all are.
    public static func invalidSourceAddress(in addresses: [String]) -> (index: Int, address: String)? {
        addresses.enumerated().first { SocketAddress(numericHost: $0.element, port: 0) == nil }.map { ($0.offset, $0.element) }
    }
}
