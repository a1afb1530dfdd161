/// One STOMP 1.2 frame as values: a command, ordered headers and a body of raw octets.
///
/// Header names and values are held unescaped; ``StompFrameEncoder`` escapes them on the way out and
/// ``StompFrameDecoder`` undoes that on the way in. The body is bytes because STOMP bodies may be binary
/// and may contain NUL when `content-length` frames them.
///
/// ```swift
/// let subscribe = StompFrame.subscribe(destination: "/user/queue", id: "/user/queue")
/// socket.sendText(StompFrameEncoder.encode(subscribe))
///
/// if frame.command == .message, frame.headers["subscription"] == "/user/queue" {
///     let status = try JSON.parse(frame.body)
/// }
/// ```
public struct StompFrame: Sendable, Hashable {
    public var command: StompCommand
    public var headers: StompHeaders
    public var body: [UInt8]

    /// Creates a frame; prefer the constructors such as ``connect(acceptVersion:host:login:passcode:heartBeat:)``,
    /// which spell the header names the spec requires.
    public init(command: StompCommand, headers: StompHeaders = [:], body: [UInt8] = []) {
        self.command = command
        self.headers = headers
        self.body = body
    }
}

extension StompFrame: CustomStringConvertible {
    /// The command, headers and body size on one line, for logs and test failures.
    public var description: String {
        "\(command.rawValue) \(headers) (\(body.count) body bytes)"
    }
}
