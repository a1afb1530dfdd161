import AuthloadCore

/// What the staging server was asked, as an access log counts it: requests by method and route.
///
/// A route is the path without its query, with every segment that names one thing rather than an endpoint
/// collapsed: all digits (an invitation code) become `{n}`, anything id-shaped (hex, a UUID, a base64url token,
/// as the services issue for sessions and handles) `{id}`, so the count of one route does not split by user or
/// session. WebSocket upgrades count as the `GET` they are.
///
/// The table is bounded: a client that sends a new path with every request (or an id this reading does not
/// recognise) would otherwise grow it by one entry a request for as long as the server runs, as FCSDK logouts
/// did before session ids were collapsed (a soak's RSS grew 6 % in 5 minutes). Past ``routeCapacity`` routes,
/// requests to a route not yet in the table count under ``otherRoute``.
/// Tests compare it with what authload says it sent; `authload serve` prints it when it stops.
public final class AccessLog: Sendable {
    /// The most routes the table holds; more than a screen of routes says the reading missed an id.
    public static let routeCapacity = 48
    /// Where requests to routes past ``routeCapacity`` are counted.
    public static let otherRoute = "other"

    private let counts = Locked<[String: Int]>([:])
    private let capacity: Int

    public init(routeCapacity: Int = AccessLog.routeCapacity) {
        capacity = max(1, routeCapacity)
    }

    func record(_ request: HTTPRequest) {
        let route = "\(request.method) \(Self.route(of: request.path))"
        counts.withLock { counts in
            if counts[route] == nil, counts.count >= capacity {
                counts[Self.otherRoute, default: 0] += 1
            } else {
                counts[route, default: 0] += 1
            }
        }
    }

    /// Requests by `"METHOD /route"`, and by ``otherRoute`` past the table's capacity.
    public var byRoute: [String: Int] { counts.withLock { $0 } }

    /// Every request answered.
    public var total: Int { counts.withLock { $0.values.reduce(0, +) } }

    static func route(of path: some StringProtocol) -> String {
        // Split on bytes: a path is ASCII, and splitting by `Character` was most of the log's cost per request.
        String(path).utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
            .map { bytes in
                let segment = Substring(bytes)
                if isNumber(segment) { return "{n}" }
                if isIdentifier(segment) { return "{id}" }
                return String(segment)
            }
            .joined(separator: "/")
    }

    private static func isNumber(_ segment: some StringProtocol) -> Bool {
        !segment.isEmpty && segment.utf8.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
    }

    /// Whether a segment looks like an id rather than a word of an API: a UUID, hex of 8 characters or more with a
    /// digit in it (or of 16 and more: FCSDK's session ids are two unpadded 64-bit numbers), or a base64url token of
    /// 16 characters or more with a digit in it. Words such as `select-authenticator-enroll` or `openid-configuration`
    /// have no digit; `v1`, `oauth2` and `ws` are short.
    static func isIdentifier(_ segment: some StringProtocol) -> Bool {
        let bytes = Array(segment.utf8)
        guard bytes.count >= 8 else { return false }
        let digits = bytes.filter(isDigit).count
        if bytes.allSatisfy(isHex) { return digits > 0 || bytes.count >= 16 }
        if isUUID(bytes) { return true }
        return bytes.count >= 16 && digits > 0 && bytes.allSatisfy(isBase64URL)
    }

    private static func isUUID(_ bytes: [UInt8]) -> Bool {
        guard bytes.count == 36 else { return false }
        return bytes.indices.allSatisfy { [8, 13, 18, 23].contains($0) ? bytes[$0] == UInt8(ascii: "-") : isHex(bytes[$0]) }
    }

    private static func isDigit(_ byte: UInt8) -> Bool { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }

    private static func isHex(_ byte: UInt8) -> Bool {
        isDigit(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(byte)
    }

    private static func isBase64URL(_ byte: UInt8) -> Bool {
        isDigit(byte) || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
            || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
    }
}
