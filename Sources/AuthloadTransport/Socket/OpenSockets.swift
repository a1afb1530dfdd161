import Synchronization

/// The client sockets this process holds open right now: HTTP connections and open WebSockets.
///
/// Counted where a connection's life begins and ends (its socket connecting; its `close` or the WebSocket's
/// closing handshake), process-wide, for the live metrics. An embedded staging server's own connections
/// are not client sockets and are not counted.
public enum OpenSockets {
    static let http = Atomic<Int>(0)
    static let webSockets = Atomic<Int>(0)
    static let made = Atomic<Int>(0)

    /// TCP sockets this process has ever made, client and server: a simulated run must leave it unchanged.
    public static var tcpSocketsMade: Int { made.load(ordering: .relaxed) }

    /// HTTP connections open or connecting.
    public static var httpConnections: Int { http.load(ordering: .relaxed) }

    /// WebSockets past their opening handshake and not yet closed.
    public static var webSocketConnections: Int { webSockets.load(ordering: .relaxed) }
}
