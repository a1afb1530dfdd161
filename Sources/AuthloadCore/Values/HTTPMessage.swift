/// An HTTP request as a value, whatever version carries it: what a flow asks for and what a staging service receives.
public struct HTTPRequest: Sendable, Hashable {
    public var method: String
    /// The request target: path plus optional `?query`, e.g. `/csdk-sample/SDK/login`.
    public var target: String
    public var headers: HTTPHeaders
    public var body: [UInt8]

    public init(method: String, target: String, headers: HTTPHeaders = [:], body: [UInt8] = []) {
        self.method = method
        self.target = target
        self.headers = headers
        self.body = body
    }

    /// The target without its query string.
    public var path: Substring {
        // Searched as bytes: a target is ASCII, and a search by `Character` was 3 % of a simulated soak's CPU.
        target.utf8.firstIndex(of: UInt8(ascii: "?")).map { target[..<$0] } ?? target[...]
    }
}

/// The HTTP version a request travelled on, as reports name it.
public enum HTTPVersion: String, Sendable, Hashable, Codable, CaseIterable {
    /// HTTP/1.1 (RFC 9112), one request at a time on a connection.
    case http1 = "h1"
    /// HTTP/2 (RFC 9113), requests multiplexed as streams on one connection.
    case http2 = "h2"
}

/// An HTTP response as a value, plus the transport's timing of the exchange and the version that carried it.
public struct HTTPResponse: Sendable, Hashable {
    public var status: Int
    public var reason: String
    public var headers: HTTPHeaders
    public var body: [UInt8]
    public var timing: RequestTiming
    /// Which version of HTTP carried the exchange; HTTP/1.1 unless a transport says otherwise.
    public var version: HTTPVersion = .http1
    /// How many times the transport sent the request again because the server had not processed it (HTTP/2: a
    /// stream refused with REFUSED_STREAM or above the last stream of a GOAWAY, RFC 9113 §8.7). Those sends never
    /// reached the server's logic, so the request still counts once; reports count them apart (`httpResent`).
    public var resent = 0

    public init(status: Int, reason: String? = nil, headers: HTTPHeaders = [:], body: [UInt8] = [], timing: RequestTiming = RequestTiming())
    {
        self.status = status
        self.reason = reason ?? HTTPResponse.standardReason(for: status)
        self.headers = headers
        self.body = body
        self.timing = timing
    }

    public static func standardReason(for status: Int) -> String {
        switch status {
        case 100: "Continue"
        case 101: "Switching Protocols"
        case 200: "OK"
        case 201: "Created"
        case 204: "No Content"
        case 301: "Moved Permanently"
        case 302: "Found"
        case 304: "Not Modified"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 408: "Request Timeout"
        case 410: "Gone"
        case 409: "Conflict"
        case 413: "Content Too Large"
        case 426: "Upgrade Required"
        case 429: "Too Many Requests"
        case 431: "Request Header Fields Too Large"
        case 500: "Internal Server Error"
        case 501: "Not Implemented"
        case 502: "Bad Gateway"
        case 503: "Service Unavailable"
        case 504: "Gateway Timeout"
        case 505: "HTTP Version Not Supported"
        default: "Status \(status)"
        }
    }
}

/// Where the time of one request went, measured by the transport on the monotonic clock.
///
/// Each figure counts from the hand-off to the transport. `connect` (TCP) and `tlsHandshake` (the TLS
/// handshake after it) are zero when the request reused a kept-alive connection.
public struct RequestTiming: Sendable, Hashable {
    // Kept in nanoseconds, the event loops' unit: five `Duration`s took 80 bytes, and a response is copied into the
    // frames of the async calls that carry it, whose memory a user's task keeps at its deepest for the task's life
    // (`idle-users-rss.sh 100000`: 212 MB with four, 234 MB once the fifth came).
    private var connectNanoseconds: Int64
    private var tlsHandshakeNanoseconds: Int64
    private var timeToFirstByteNanoseconds: Int64
    private var totalNanoseconds: Int64
    private var streamWaitNanoseconds: Int64
    public var reusedConnection: Bool

    public var connect: Duration {
        get { .nanoseconds(connectNanoseconds) }
        set { connectNanoseconds = newValue.nanoseconds }
    }
    public var tlsHandshake: Duration {
        get { .nanoseconds(tlsHandshakeNanoseconds) }
        set { tlsHandshakeNanoseconds = newValue.nanoseconds }
    }
    public var timeToFirstByte: Duration {
        get { .nanoseconds(timeToFirstByteNanoseconds) }
        set { timeToFirstByteNanoseconds = newValue.nanoseconds }
    }
    public var total: Duration {
        get { .nanoseconds(totalNanoseconds) }
        set { totalNanoseconds = newValue.nanoseconds }
    }
    /// HTTP/2: how long the request waited for a stream (the server's SETTINGS_MAX_CONCURRENT_STREAMS reached on every
    /// connection it may use) and for flow-control window to send its body. Part of `total`, as a pool's wait is:
    /// the user waited; counted apart too, so a report can tell a server's limits from its slowness. Zero on HTTP/1.1.
    public var streamWait: Duration {
        get { .nanoseconds(streamWaitNanoseconds) }
        set { streamWaitNanoseconds = newValue.nanoseconds }
    }

    public init(
        connect: Duration = .zero, tlsHandshake: Duration = .zero, timeToFirstByte: Duration = .zero,
        total: Duration = .zero, reusedConnection: Bool = false, streamWait: Duration = .zero
    ) {
        connectNanoseconds = connect.nanoseconds
        tlsHandshakeNanoseconds = tlsHandshake.nanoseconds
        timeToFirstByteNanoseconds = timeToFirstByte.nanoseconds
        totalNanoseconds = total.nanoseconds
        streamWaitNanoseconds = streamWait.nanoseconds
        self.reusedConnection = reusedConnection
    }
}

extension StringProtocol {
    /// ASCII case-insensitive comparison, enough for header names and tokens.
    @inlinable
    public func caseInsensitiveEquals(_ other: some StringProtocol) -> Bool {
        let a = utf8
        let b = other.utf8
        guard a.count == b.count else { return false }
        return zip(a, b).allSatisfy { x, y in x == y || (x | 0x20 == y | 0x20 && (x | 0x20) >= 0x61 && (x | 0x20) <= 0x7A) }
    }
}
