/// The first line of a STOMP 1.2 frame: what a client asks for, or what a server reports.
///
/// Raw values are the exact wire spellings; commands are case-sensitive, so `send` is not `SEND`.
public enum StompCommand: String, Sendable, Hashable, CaseIterable {
    case connect = "CONNECT"
    /// A 1.2 synonym for CONNECT, which lets a server tell STOMP apart from HTTP on a shared port.
    case stomp = "STOMP"
    case connected = "CONNECTED"
    case send = "SEND"
    case subscribe = "SUBSCRIBE"
    case unsubscribe = "UNSUBSCRIBE"
    case ack = "ACK"
    case nack = "NACK"
    case begin = "BEGIN"
    case commit = "COMMIT"
    case abort = "ABORT"
    case disconnect = "DISCONNECT"
    case message = "MESSAGE"
    case receipt = "RECEIPT"
    case error = "ERROR"

    /// Whether a client sends this frame; the rest (CONNECTED, MESSAGE, RECEIPT, ERROR) come from the server.
    public var isClientCommand: Bool {
        switch self {
        case .connected, .message, .receipt, .error: false
        default: true
        }
    }

    /// Whether header names and values are escaped (`\r` `\n` `\c` `\\`) in frames with this command.
    ///
    /// STOMP 1.2 exempts CONNECT and CONNECTED so that 1.0 peers can still read them; STOMP is treated like
    /// CONNECT because it is the same frame under another name, and a client sends it before any version is agreed.
    public var escapesHeaders: Bool {
        switch self {
        case .connect, .stomp, .connected: false
        default: true
        }
    }

    /// The command spelled by `bytes`, or nil; the longest command is 11 bytes, so longer lines are rejected unread.
    ///
    /// Compared as bytes with each spelling of that length: a decoder reads one command a frame, and building a string to
    /// match against the raw values cost more than the rest of the command line.
    init?(_ bytes: ArraySlice<UInt8>) {
        guard bytes.count <= 11 else { return nil }
        for (command, spelling) in Self.spellings where spelling.count == bytes.count && spelling.elementsEqual(bytes) {
            self = command
            return
        }
        return nil
    }

    private static let spellings: [(StompCommand, [UInt8])] = allCases.map { ($0, Array($0.rawValue.utf8)) }
}
