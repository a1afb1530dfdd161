import AuthloadCore

extension WebSocketHandshake {
    /// Headers the handshake itself owns; a caller's copies are replaced so the key and offer stay consistent.
    private static let ownedHeaders = [
        "Upgrade", "Connection", "Sec-WebSocket-Key", "Sec-WebSocket-Version",
        "Sec-WebSocket-Protocol", "Sec-WebSocket-Extensions"
    ]

    /// Returns the upgrade request for a caller's `GET`: its target and extra headers (cookies,
    /// `Authorization`, `Origin`, a `Host` of its own) kept, the handshake headers set from `key` and `protocols`.
    ///
    /// - Parameters:
    ///   - request: What the caller asked for; its method and body are not used (an upgrade is a bodiless GET).
    ///   - host: The `Host` value when the caller's headers have none.
    public static func makeRequest(extending request: HTTPRequest, host: String, key: String, protocols: [String] = []) -> HTTPRequest {
        var upgrade = makeRequest(target: request.target, host: request.headers["Host"] ?? host, key: key, protocols: protocols)
        for field in request.headers
        where !field.name.caseInsensitiveEquals("Host")
            && !ownedHeaders.contains(where: { field.name.caseInsensitiveEquals($0) })
        {
            upgrade.headers.add(field.name, field.value)
        }
        return upgrade
    }

    /// Whether a request asks to switch to WebSocket (its `Upgrade` lists `websocket`); other upgrades
    /// (h2c and the like) are not, and a server may simply answer them as plain HTTP.
    public static func isUpgradeRequest(_ request: HTTPRequest) -> Bool {
        hasToken("websocket", in: request.headers.values(of: "Upgrade"))
    }

    /// The sub-protocols a client offered, in its order of preference.
    public static func offeredProtocols(in request: HTTPRequest) -> [String] {
        tokens(request.headers.values(of: "Sec-WebSocket-Protocol")).map(String.init)
    }
}
