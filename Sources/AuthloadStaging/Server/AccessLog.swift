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

    private let table = Locked(Table())
    private let capacity: Int

    public init(routeCapacity: Int = AccessLog.routeCapacity) {
        capacity = max(1, routeCapacity)
    }

    /// Routes as bytes with their counts, looked up by a hash of their bytes: this runs for every request a simulated
    /// soak sends, where a `String` built for each request's route and hashed into a dictionary was 2 % of its CPU.
    private struct Table {
        var routes: [(hash: UInt64, route: [UInt8], count: Int)] = []
        var other = 0

        /// - Parameter hash: ``AccessLog/hash(_:)`` of `route`.
        mutating func count(_ route: UnsafeBufferPointer<UInt8>, hash: UInt64, capacity: Int) {
            for index in routes.indices where routes[index].hash == hash && Self.equal(routes[index].route, route) {
                routes[index].count += 1
                return
            }
            if routes.count >= capacity {
                other += 1
            } else {
                routes.append((hash, Array(route), 1))
            }
        }

        /// Byte by byte through both buffers: the generic `elementsEqual` walked an iterator per side, a quarter of a
        /// percent of a simulated soak for routes whose hashes already matched.
        private static func equal(_ stored: [UInt8], _ route: UnsafeBufferPointer<UInt8>) -> Bool {
            guard stored.count == route.count else { return false }
            return stored.withUnsafeBufferPointer { stored in
                for index in 0..<route.count where stored[index] != route[index] { return false }
                return true
            }
        }
    }

    /// Counts `request`, whose path (``HTTPRequest/path``) the caller has found.
    func record(_ request: HTTPRequest, path: Substring) {
        let method = request.method.utf8
        let bytes = path.utf8
        // A segment of one byte may become three (`{n}`): the route is never longer than this.
        let bound = method.count + 1 + 3 * (bytes.count + 1)
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: bound) { buffer in
            var length = 0
            for byte in method { append(byte, to: buffer, at: &length) }
            append(UInt8(ascii: " "), to: buffer, at: &length)
            Self.appendRoute(of: path) { byte in append(byte, to: buffer, at: &length) }
            let route = UnsafeBufferPointer(rebasing: buffer[..<length])
            let hash = Self.hash(route)
            table.withLock { $0.count(route, hash: hash, capacity: capacity) }
        }
    }

    @inline(__always)
    private func append(_ byte: UInt8, to buffer: UnsafeMutableBufferPointer<UInt8>, at length: inout Int) {
        buffer[length] = byte
        length += 1
    }

    /// A hash of a route for the table: its length and its first and last eight bytes, read as two words.
    ///
    /// Routes that share these differ further in, and the table compares every byte of a route whose hash matches, so
    /// they cost a comparison more, never a wrong count. A hash of every byte as it was written (FNV-1a, a multiply per
    /// byte, each waiting for the last) was about a sixth of what counting a request cost (perf, a simulated soak).
    static func hash(_ route: UnsafeBufferPointer<UInt8>) -> UInt64 {
        let raw = UnsafeRawBufferPointer(route)
        guard raw.count >= 8 else {
            return raw.reduce(UInt64(raw.count)) { $0 << 8 | UInt64($1) }
        }
        let head = UInt64(littleEndian: raw.loadUnaligned(as: UInt64.self))
        let tail = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: raw.count - 8, as: UInt64.self))
        return (head &* 0x9E37_79B9_7F4A_7C15) ^ (tail &+ UInt64(raw.count)) &* 0xC2B2_AE3D_27D4_EB4F
    }

    /// Requests by `"METHOD /route"`, and by ``otherRoute`` past the table's capacity.
    public var byRoute: [String: Int] {
        table.withLock { table in
            var routes: [String: Int] = [:]
            for entry in table.routes { routes[String(decoding: entry.route, as: UTF8.self)] = entry.count }
            if table.other > 0 { routes[Self.otherRoute] = table.other }
            return routes
        }
    }

    /// Every request answered.
    public var total: Int { table.withLock { table in table.routes.reduce(table.other) { $0 + $1.count } } }

    static func route(of path: some StringProtocol) -> String {
        var route: [UInt8] = []
        appendRoute(of: Substring(path)) { route.append($0) }
        return String(decoding: route, as: UTF8.self)
    }

    /// Hands the bytes of the route of `path` to `append`, reading each segment once, from the path's contiguous bytes.
    @inline(__always)
    private static func appendRoute(of path: Substring, _ append: (UInt8) -> Void) {
        var path = path
        path.withUTF8 { bytes in
            var start = 0
            while true {
                let end = bytes[start...].firstIndex(of: UInt8(ascii: "/")) ?? bytes.endIndex
                let segment = bytes[start..<end]
                switch Segment(segment) {
                case .number: for byte in "{n}".utf8 { append(byte) }
                case .identifier: for byte in "{id}".utf8 { append(byte) }
                case .word: for byte in segment { append(byte) }
                }
                guard end < bytes.endIndex else { return }
                append(UInt8(ascii: "/"))
                start = end + 1
            }
        }
    }

    /// What a path segment names, read in one pass over its bytes.
    private enum Segment {
        case number, identifier, word

        init(_ bytes: some Collection<UInt8>) {
            var count = 0
            var digits = 0
            // The classes every byte has: hex and base64url hold for the segment when they hold for each byte.
            var every = AccessLog.digit | AccessLog.hex | AccessLog.base64URL
            AccessLog.classes.withUnsafeBufferPointer { classes in
                for byte in bytes {
                    // One look-up per byte and two operations on it: this runs on every segment of every request's path.
                    let kind = classes[Int(byte)]
                    every &= kind
                    digits &+= Int(kind & AccessLog.digit)
                    count &+= 1
                }
            }
            let hex = every & AccessLog.hex != 0
            let base64URL = every & AccessLog.base64URL != 0
            if count > 0 && digits == count {
                self = .number
            } else if count >= 8 && hex && (digits > 0 || count >= 16) {
                self = .identifier
            } else if count == 36 && Self.isUUID(bytes) {
                // Only a segment of a UUID's length is read again, for its dashes.
                self = .identifier
            } else if count >= 16 && digits > 0 && base64URL {
                self = .identifier
            } else {
                self = .word
            }
        }

        /// Whether the 36 bytes are a UUID's: hex, with dashes at 8, 13, 18 and 23.
        private static func isUUID(_ bytes: some Collection<UInt8>) -> Bool {
            var position = 0
            for byte in bytes {
                let dash = position == 8 || position == 13 || position == 18 || position == 23
                guard dash ? byte == UInt8(ascii: "-") : AccessLog.classes[Int(byte)] & AccessLog.hex != 0 else { return false }
                position += 1
            }
            return true
        }
    }

    private static let digit: UInt8 = 1
    private static let hex: UInt8 = 2
    private static let base64URL: UInt8 = 4

    /// The classes of each byte value: a digit is hex and base64url too, a hex letter base64url too.
    private static let classes: [UInt8] = (0...255).map { value in
        let byte = UInt8(value)
        let digit = isDigit(byte)
        let hexLetter = (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(byte)
        return (digit ? AccessLog.digit : 0) | (digit || hexLetter ? AccessLog.hex : 0) | (isBase64URL(byte) ? AccessLog.base64URL : 0)
    }

    /// Whether a segment looks like an id rather than a word of an API: a UUID, hex of 8 characters or more with a
    /// digit in it (or of 16 and more: FCSDK's session ids are two unpadded 64-bit numbers), or a base64url token of
    /// 16 characters or more with a digit in it. Words such as `select-authenticator-enroll` or `openid-configuration`
    /// have no digit; `v1`, `oauth2` and `ws` are short.
    static func isIdentifier(_ segment: some StringProtocol) -> Bool {
        if case .identifier = Segment(segment.utf8) { return true }
        return false
    }

    private static func isDigit(_ byte: UInt8) -> Bool { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }

    private static func isBase64URL(_ byte: UInt8) -> Bool {
        isDigit(byte) || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
            || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
    }
}
