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
        var route = request.method
        route.append(" ")
        Self.appendRoute(of: request.path, to: &route)
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
        var route = ""
        appendRoute(of: Substring(path), to: &route)
        return route
    }

    /// Appends the route of `path` to `route`, reading each segment once: this runs for every request a
    /// simulated soak sends, where splitting, mapping and joining strings was 4 % of its CPU.
    private static func appendRoute(of path: Substring, to route: inout String) {
        let bytes = path.utf8
        var start = bytes.startIndex
        while true {
            let end = bytes[start...].firstIndex(of: UInt8(ascii: "/")) ?? bytes.endIndex
            let segment = path[start..<end]
            switch Segment(segment.utf8) {
            case .number: route.append("{n}")
            case .identifier: route.append("{id}")
            case .word: route.append(contentsOf: segment)
            }
            guard end < bytes.endIndex else { return }
            route.append("/")
            start = bytes.index(after: end)
        }
    }

    /// What a path segment names, read in one pass over its bytes.
    private enum Segment {
        case number, identifier, word

        init(_ bytes: Substring.UTF8View) {
            var count = 0
            var digits = 0
            var hex = true
            var base64URL = true
            var uuid = true
            for byte in bytes {
                let digit = isDigit(byte)
                if digit { digits += 1 }
                let isHexByte =
                    digit || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
                    || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(byte)
                hex = hex && isHexByte
                base64URL = base64URL && (isHexByte || isBase64URL(byte))
                let dash = count == 8 || count == 13 || count == 18 || count == 23
                uuid = uuid && (dash ? byte == UInt8(ascii: "-") : isHexByte)
                count += 1
            }
            if count > 0 && digits == count {
                self = .number
            } else if count >= 8 && hex && (digits > 0 || count >= 16) {
                self = .identifier
            } else if count == 36 && uuid {
                self = .identifier
            } else if count >= 16 && digits > 0 && base64URL {
                self = .identifier
            } else {
                self = .word
            }
        }
    }

    /// Whether a segment looks like an id rather than a word of an API: a UUID, hex of 8 characters or more with a
    /// digit in it (or of 16 and more: FCSDK's session ids are two unpadded 64-bit numbers), or a base64url token of
    /// 16 characters or more with a digit in it. Words such as `select-authenticator-enroll` or `openid-configuration`
    /// have no digit; `v1`, `oauth2` and `ws` are short.
    static func isIdentifier(_ segment: some StringProtocol) -> Bool {
        if case .identifier = Segment(Substring(segment).utf8) { return true }
        return false
    }

    private static func isDigit(_ byte: UInt8) -> Bool { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }

    private static func isBase64URL(_ byte: UInt8) -> Bool {
        isDigit(byte) || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
            || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
    }
}
