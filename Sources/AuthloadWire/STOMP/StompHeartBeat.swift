/// The two intervals of a `heart-beat` header, and the negotiation that turns a client's and a server's into timers.
///
/// Each side says how often it can send (`cx` / `sx`) and how often it wants to receive (`cy` / `sy`), in
/// milliseconds, with 0 meaning "cannot" or "do not want". A missing header means `0,0`, i.e. ``disabled``.
///
/// ```swift
/// let offered = StompHeartBeat(send: 0, receive: 10_000)
/// let accepted = connected.headers["heart-beat"].flatMap(StompHeartBeat.init) ?? .disabled
/// let timers = StompHeartBeat.negotiate(client: offered, server: accepted)
/// timers.serverToClient   // 10 s: expect traffic from the server at least this often (plus tolerance)
/// timers.clientToServer   // nil: the client never sends heart-beats
/// ```
public struct StompHeartBeat: Sendable, Hashable, LosslessStringConvertible {
    /// Smallest interval in milliseconds at which this side can send heart-beats; 0 means it cannot.
    public var sendMilliseconds: Int
    /// Interval in milliseconds at which this side wants to receive heart-beats; 0 means it does not want them.
    public var receiveMilliseconds: Int

    /// Neither sending nor receiving: what an absent header means.
    public static let disabled = StompHeartBeat(send: 0, receive: 0)

    /// Creates the intervals one side offers, in milliseconds; a negative interval counts as 0 ("cannot", "do not want").
    public init(send: Int, receive: Int) {
        sendMilliseconds = max(send, 0)
        receiveMilliseconds = max(receive, 0)
    }

    /// Parses a header value `"cx,cy"`: two decimal numbers, optionally padded with spaces; nil otherwise.
    ///
    /// Padding is tolerated because some brokers write `"10000, 10000"` and the meaning is unambiguous.
    public init?(_ description: String) {
        let parts = description.utf8.split(separator: UInt8(ascii: ","), omittingEmptySubsequences: false)
        guard parts.count == 2, let send = Self.milliseconds(parts[0]), let receive = Self.milliseconds(parts[1]) else {
            return nil
        }
        self.init(send: send, receive: receive)
    }

    /// The header value, `"cx,cy"`.
    public var description: String { "\(sendMilliseconds),\(receiveMilliseconds)" }

    /// The intervals both sides agreed on, as STOMP 1.2 defines them; 0 milliseconds (or a nil duration) means off.
    public struct Negotiated: Sendable, Hashable {
        /// How often the client must send something; 0 when it does not send heart-beats.
        public var clientToServerMilliseconds: Int
        /// How often the server must send something; 0 when it does not send heart-beats.
        public var serverToClientMilliseconds: Int

        public init(clientToServerMilliseconds: Int, serverToClientMilliseconds: Int) {
            self.clientToServerMilliseconds = clientToServerMilliseconds
            self.serverToClientMilliseconds = serverToClientMilliseconds
        }

        /// The client's sending interval, or nil when it sends no heart-beats.
        public var clientToServer: Duration? { Self.duration(clientToServerMilliseconds) }
        /// The server's sending interval, or nil when it sends no heart-beats.
        public var serverToClient: Duration? { Self.duration(serverToClientMilliseconds) }

        private static func duration(_ milliseconds: Int) -> Duration? {
            milliseconds > 0 ? .milliseconds(milliseconds) : nil
        }
    }

    /// Combines the CONNECT and CONNECTED offers.
    ///
    /// Client → server is 0 if `cx == 0 || sy == 0`, else `max(cx, sy)`; server → client is 0 if
    /// `sx == 0 || cy == 0`, else `max(sx, cy)`: a side never sends faster than it can, nor than the other wants.
    public static func negotiate(client: StompHeartBeat, server: StompHeartBeat) -> Negotiated {
        Negotiated(
            clientToServerMilliseconds: interval(canSend: client.sendMilliseconds, wants: server.receiveMilliseconds),
            serverToClientMilliseconds: interval(canSend: server.sendMilliseconds, wants: client.receiveMilliseconds)
        )
    }

    private static func interval(canSend: Int, wants: Int) -> Int {
        canSend == 0 || wants == 0 ? 0 : max(canSend, wants)
    }

    /// One number of the header: digits between optional spaces, without overflow.
    private static func milliseconds(_ part: Substring.UTF8View) -> Int? {
        var digits = part
        while digits.first == 0x20 { digits.removeFirst() }
        while digits.last == 0x20 { digits.removeLast() }
        // 18 digits stay below Int.max, and no real interval comes near that.
        guard !digits.isEmpty, digits.count <= 18, digits.allSatisfy({ $0 &- 0x30 < 10 }) else { return nil }
        return digits.reduce(0) { $0 * 10 + Int($1 - 0x30) }
    }
}
