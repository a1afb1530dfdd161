/// Where to listen: `PORT` (on loopback), `HOST:PORT` or `[IPv6]:PORT`, with a numeric host.
///
/// A bare port listens on 127.0.0.1: serving anything beyond this machine must be asked for by writing
/// the address (`0.0.0.0:9464`).
public struct ListenAddress: Sendable, Equatable {
    public var host: String
    public var port: Int

    public static let expected = "expected PORT, HOST:PORT or [IPv6]:PORT with a numeric host, e.g. 9464 or 127.0.0.1:9464"

    public init?(_ text: String) {
        var host = "127.0.0.1"
        var portText = Substring(text)
        if text.hasPrefix("["), let close = text.firstIndex(of: "]") {
            host = String(text[text.index(after: text.startIndex)..<close])
            let rest = text[text.index(after: close)...]
            guard rest.hasPrefix(":") else { return nil }
            portText = rest.dropFirst()
        } else if let colon = text.lastIndex(of: ":") {
            host = String(text[..<colon])
            portText = text[text.index(after: colon)...]
        }
        guard !host.isEmpty, let port = Int(portText), (0...65_535).contains(port) else { return nil }
        self.host = host
        self.port = port
    }

    /// Whether the address stays on this machine.
    public var isLoopback: Bool { host.hasPrefix("127.") || host == "::1" || host == "localhost" }
}
