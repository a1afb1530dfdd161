import AuthloadCore

/// The HTTP/1.1 opening handshake of RFC 6455 §4, for both ends, as pure functions over request and response values.
///
/// Client side: build the upgrade request with a fresh key, send it, and check the 101 response
/// before treating the socket as open. Server side: check the request and answer it with the 101
/// response or, on failure, with ``rejection(for:)``. No extensions are ever offered or accepted.
///
/// ```swift
/// let key = WebSocketHandshake.makeKey()
/// let request = WebSocketHandshake.makeRequest(target: "/ws", host: "gccs.example:443", key: key,
///                                              protocols: ["v12.stomp", "v11.stomp"])
/// // … send it, read the response …
/// let selected = try WebSocketHandshake.validate(response: response, key: key,
///                                                offeredProtocols: ["v12.stomp", "v11.stomp"])
/// ```
public enum WebSocketHandshake {
    /// The GUID that RFC 6455 §1.3 appends to the key before hashing.
    public static let acceptGUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

    // MARK: Client

    /// Returns a fresh `Sec-WebSocket-Key`: base64 of 16 random bytes, new for every connection.
    public static func makeKey() -> String {
        Base64.encoded(Digest.secureRandomBytes(count: 16))
    }

    /// Returns the `Sec-WebSocket-Accept` value that proves a server read `key`: base64(SHA-1(key + GUID)).
    public static func acceptValue(forKey key: String) -> String {
        Base64.encoded(Digest.sha1(Array((key + acceptGUID).utf8)))
    }

    /// Returns the upgrade request (RFC 6455 §4.1).
    ///
    /// - Parameters:
    ///   - target: Path and query, e.g. `/gccs/ws?lang=en`.
    ///   - host: The `Host` value, with the port when it is not the scheme's default.
    ///   - key: A value from ``makeKey()``; keep it to validate the response.
    ///   - protocols: Sub-protocols to offer, most preferred first; none when empty.
    ///   - origin: An `Origin` header, which non-browser clients may leave out.
    public static func makeRequest(target: String, host: String, key: String, protocols: [String] = [], origin: String? = nil)
        -> HTTPRequest
    {
        var headers: HTTPHeaders = [
            "Host": host,
            "Upgrade": "websocket",
            "Connection": "Upgrade",
            "Sec-WebSocket-Key": key,
            "Sec-WebSocket-Version": "13"
        ]
        if let origin { headers.add("Origin", origin) }
        if !protocols.isEmpty { headers.add("Sec-WebSocket-Protocol", protocols.joined(separator: ", ")) }
        return HTTPRequest(method: "GET", target: target, headers: headers)
    }

    /// Checks the server's answer to the upgrade request and returns the sub-protocol it selected.
    ///
    /// - Returns: The selected sub-protocol, always one of `offeredProtocols`, or nil if the server chose none.
    /// - Throws: ``WebSocketError`` when the status is not 101, `Upgrade` is not `websocket`, `Connection`
    ///   lacks `upgrade`, `Sec-WebSocket-Accept` is missing or wrong, an extension was selected, or the
    ///   sub-protocol was not offered; the socket must then not be used as a WebSocket.
    public static func validate(response: HTTPResponse, key: String, offeredProtocols: [String] = []) throws(WebSocketError) -> String? {
        guard response.status == 101 else {
            throw .handshake(
                .unexpectedStatus,
                "server answered \(response.status) \(WebSocketError.quoted(response.reason)) instead of 101 Switching Protocols")
        }
        let headers = response.headers
        let upgrade = headers.values(of: "Upgrade")
        guard upgrade.count == 1, trimmed(upgrade[0]).caseInsensitiveEquals("websocket") else {
            throw .handshake(
                .invalidUpgrade,
                upgrade.isEmpty
                    ? "101 response has no Upgrade header"
                    : "101 response has Upgrade \(WebSocketError.quoted(upgrade.joined(separator: ", "))) instead of 'websocket'")
        }
        guard hasToken("upgrade", in: headers.values(of: "Connection")) else {
            throw .handshake(.invalidConnection, "101 response has no 'upgrade' token in Connection")
        }
        let accept = headers.values(of: "Sec-WebSocket-Accept")
        let expected = acceptValue(forKey: key)
        guard accept.count == 1, trimmed(accept[0]) == expected else {
            throw .handshake(
                .invalidAccept,
                accept.isEmpty
                    ? "101 response has no Sec-WebSocket-Accept"
                    : "Sec-WebSocket-Accept \(WebSocketError.quoted(accept.joined(separator: ", "))) does not match the key (expected '\(expected)')"
            )
        }
        let extensions = tokens(headers.values(of: "Sec-WebSocket-Extensions"))
        guard extensions.isEmpty else {
            throw .handshake(
                .unexpectedExtension, "server selected extension \(WebSocketError.quoted(String(extensions[0]))), but none was offered")
        }
        let selected = tokens(headers.values(of: "Sec-WebSocket-Protocol"))
        guard let chosen = selected.first else { return nil }
        guard selected.count == 1 else {
            throw .handshake(.unexpectedProtocol, "server selected \(selected.count) sub-protocols; at most one is allowed")
        }
        guard offeredProtocols.contains(where: { $0 == chosen }) else {
            let offered = offeredProtocols.isEmpty ? "none was offered" : "offered: \(offeredProtocols.joined(separator: ", "))"
            throw .handshake(.unexpectedProtocol, "server selected sub-protocol \(WebSocketError.quoted(String(chosen))), but \(offered)")
        }
        return String(chosen)
    }

    // MARK: Server

    /// Checks an upgrade request (RFC 6455 §4.2.1) and returns the 101 response that opens the connection.
    ///
    /// The selected sub-protocol is the first one the client offered that `supportedProtocols` lists;
    /// with no match the response selects none and the client decides whether to go on.
    ///
    /// - Returns: The 101 response, or the error to answer with ``rejection(for:)``: not GET (405),
    ///   `Upgrade` without `websocket` or `Connection` without `upgrade` (400), `Sec-WebSocket-Version`
    ///   missing or not 13 (426), `Sec-WebSocket-Key` missing, repeated or not base64 of 16 bytes (400).
    public static func accept(request: HTTPRequest, supportedProtocols: [String] = []) -> Result<HTTPResponse, WebSocketError> {
        Result { () throws(WebSocketError) in try acceptResponse(request, supportedProtocols) }
    }

    /// Returns the response refusing a handshake: the error's status, `Sec-WebSocket-Version: 13` with
    /// 426 so the client can retry in a version it knows, `Allow: GET` with 405, and the reason as text.
    public static func rejection(for error: WebSocketError) -> HTTPResponse {
        var headers: HTTPHeaders = ["Content-Type": "text/plain; charset=utf-8"]
        switch error.suggestedStatus {
        case 426: headers.add("Sec-WebSocket-Version", "13")
        case 405: headers.add("Allow", "GET")
        default: break
        }
        return HTTPResponse(status: error.suggestedStatus, headers: headers, body: Array("\(error)\n".utf8))
    }

    private static func acceptResponse(_ request: HTTPRequest, _ supportedProtocols: [String]) throws(WebSocketError) -> HTTPResponse {
        let headers = request.headers
        guard request.method == "GET" else {
            throw .handshake(.invalidMethod, "method \(WebSocketError.quoted(request.method)) is not GET")
        }
        guard hasToken("websocket", in: headers.values(of: "Upgrade")) else {
            throw .handshake(.invalidUpgrade, "request has no 'websocket' token in Upgrade")
        }
        guard hasToken("upgrade", in: headers.values(of: "Connection")) else {
            throw .handshake(.invalidConnection, "request has no 'upgrade' token in Connection")
        }
        let versions = headers.values(of: "Sec-WebSocket-Version")
        guard versions.count == 1, trimmed(versions[0]) == "13" else {
            throw .handshake(
                .unsupportedVersion,
                versions.isEmpty
                    ? "request has no Sec-WebSocket-Version; only 13 is supported"
                    : "Sec-WebSocket-Version \(WebSocketError.quoted(versions.joined(separator: ", "))) is not 13")
        }
        let keys = headers.values(of: "Sec-WebSocket-Key")
        guard keys.count == 1 else {
            throw .handshake(
                .invalidKey, keys.isEmpty ? "request has no Sec-WebSocket-Key" : "request has \(keys.count) Sec-WebSocket-Key headers")
        }
        let key = String(trimmed(keys[0]))
        guard Base64.decoded(key)?.count == 16 else {
            throw .handshake(.invalidKey, "Sec-WebSocket-Key \(WebSocketError.quoted(key)) is not base64 of 16 bytes")
        }

        var response = HTTPResponse(
            status: 101,
            headers: [
                "Upgrade": "websocket",
                "Connection": "Upgrade",
                "Sec-WebSocket-Accept": acceptValue(forKey: key)
            ])
        let offered = tokens(headers.values(of: "Sec-WebSocket-Protocol"))
        if let selected = offered.first(where: { offer in supportedProtocols.contains { $0 == offer } }) {
            response.headers.add("Sec-WebSocket-Protocol", String(selected))
        }
        return response
    }

    // MARK: Header lists

    /// The non-empty, trimmed elements of comma-separated header values (RFC 9110 §5.6.1).
    static func tokens(_ values: [String]) -> [Substring] {
        values.flatMap { $0.split(separator: ",", omittingEmptySubsequences: true) }
            .map(trimmed)
            .filter { !$0.isEmpty }
    }

    static func hasToken(_ token: String, in values: [String]) -> Bool {
        tokens(values).contains { $0.caseInsensitiveEquals(token) }
    }

    private static func trimmed(_ text: some StringProtocol) -> Substring {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        let text = Substring(text)
        guard let first = text.firstIndex(where: { !isSpace($0) }), let last = text.lastIndex(where: { !isSpace($0) }) else { return "" }
        return text[first...last]
    }
}
