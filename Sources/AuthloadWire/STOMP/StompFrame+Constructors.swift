// Constructors for the frames the authload flows and the staging server exchange, with header names
// spelled once here. Optional parameters left nil add no header, because STOMP treats an absent header
// differently from an empty one (no `host` is what the GCCS client sends, not `host:`).

extension StompFrame {
    // MARK: Client frames

    /// Opens a STOMP session; with no `host` and no `heart-beat`, this is exactly what the GCCS client sends.
    ///
    /// - Parameters:
    ///   - acceptVersion: Versions the client speaks, sent comma-separated in this order (`1.1,1.2` by default).
    ///   - host: The virtual host; STOMP 1.2 requires it, but real clients omit it and servers cope.
    ///   - login: User name for servers that authenticate the STOMP session itself.
    ///   - passcode: Password sent with `login`.
    ///   - heartBeat: Intervals this client offers; nil sends no header, which means `0,0`.
    public static func connect(
        acceptVersion: [StompVersion] = [.v1_1, .v1_2],
        host: String? = nil,
        login: String? = nil,
        passcode: String? = nil,
        heartBeat: StompHeartBeat? = nil
    ) -> StompFrame {
        var headers: StompHeaders = ["accept-version": acceptVersion.map(\.rawValue).joined(separator: ",")]
        if let host { headers.append("host", host) }
        if let login { headers.append("login", login) }
        if let passcode { headers.append("passcode", passcode) }
        if let heartBeat { headers.append("heart-beat", heartBeat.description) }
        return StompFrame(command: .connect, headers: headers)
    }

    /// Asks for messages sent to `destination`; `id` names the subscription in MESSAGE and UNSUBSCRIBE frames.
    ///
    /// `ack` is always written, even when it is the default `auto`, because the GCCS client does so.
    public static func subscribe(destination: String, id: String, ack: StompAckMode = .auto) -> StompFrame {
        StompFrame(command: .subscribe, headers: ["destination": destination, "id": id, "ack": ack.rawValue])
    }

    /// Ends the subscription that was opened with the same `id`.
    public static func unsubscribe(id: String) -> StompFrame {
        StompFrame(command: .unsubscribe, headers: ["id": id])
    }

    /// Announces a close; with a `receipt`, the server answers RECEIPT once everything before it is processed.
    public static func disconnect(receipt: String? = nil) -> StompFrame {
        var frame = StompFrame(command: .disconnect)
        if let receipt { frame.headers.append("receipt", receipt) }
        return frame
    }

    // MARK: Server frames

    /// Accepts a CONNECT, naming the version picked by ``StompVersion/negotiate(acceptVersion:supported:)``.
    ///
    /// - Parameters:
    ///   - version: The version both sides will speak.
    ///   - heartBeat: Intervals the server offers; nil sends no header, which means `0,0`.
    ///   - session: An identifier for the session, for the client's logs.
    public static func connected(
        version: StompVersion = .v1_2,
        heartBeat: StompHeartBeat? = nil,
        session: String? = nil
    ) -> StompFrame {
        var headers: StompHeaders = ["version": version.rawValue]
        if let heartBeat { headers.append("heart-beat", heartBeat.description) }
        if let session { headers.append("session", session) }
        return StompFrame(command: .connected, headers: headers)
    }

    /// Delivers `body` to a subscription, with headers in the order of the GCCS example in docs/protocols.md, GCCS.
    ///
    /// - Parameters:
    ///   - destination: Where the message was sent.
    ///   - subscription: The `id` of the SUBSCRIBE that matched.
    ///   - messageID: A server-unique identifier, used by ACK/NACK when the subscription needs them.
    ///   - contentType: The MIME type of `body`, e.g. `application/json`; nil writes no header.
    ///   - body: The payload; the encoder adds `content-length` for it.
    public static func message(
        destination: String,
        subscription: String,
        messageID: String,
        contentType: String? = nil,
        body: [UInt8] = []
    ) -> StompFrame {
        var headers: StompHeaders = ["destination": destination, "subscription": subscription, "message-id": messageID]
        if let contentType { headers.append("content-type", contentType) }
        return StompFrame(command: .message, headers: headers, body: body)
    }

    /// Confirms that the client frame carrying `receipt:<id>` has been processed.
    public static func receipt(id: String) -> StompFrame {
        StompFrame(command: .receipt, headers: ["receipt-id": id])
    }

    /// Reports a failure; the server must close the connection after sending it.
    ///
    /// - Parameters:
    ///   - message: A short description, sent in the `message` header.
    ///   - body: Optional details; when present it is labelled `text/plain`, as in the STOMP spec's example.
    public static func error(message: String, body: [UInt8] = []) -> StompFrame {
        var headers: StompHeaders = ["message": message]
        if !body.isEmpty { headers.append("content-type", "text/plain") }
        return StompFrame(command: .error, headers: headers, body: body)
    }
}
