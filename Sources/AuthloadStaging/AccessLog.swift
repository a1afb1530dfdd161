import AuthloadCore

/// What the staging server was asked, as an access log counts it: requests by method and route.
///
/// A route is the path without its query, with each all-digit segment (an invitation code, an id) written
/// `{n}`, so the count of one route does not split by user. WebSocket upgrades count as the `GET` they are.
/// Tests compare it with what authload says it sent; `authload serve` prints it when it stops.
public final class AccessLog: Sendable {
    private let counts = Locked<[String: Int]>([:])

    public init() {}

    func record(_ request: HTTPRequest) {
        let route = "\(request.method) \(Self.route(of: request.path))"
        counts.withLock { $0[route, default: 0] += 1 }
    }

    /// Requests by `"METHOD /route"`.
    public var byRoute: [String: Int] { counts.withLock { $0 } }

    /// Every request answered.
    public var total: Int { counts.withLock { $0.values.reduce(0, +) } }

    static func route(of path: some StringProtocol) -> String {
        path.split(separator: "/", omittingEmptySubsequences: false)
            .map { segment in !segment.isEmpty && segment.allSatisfy(\.isASCII) && segment.allSatisfy(\.isNumber) ? "{n}" : String(segment)
            }
            .joined(separator: "/")
    }
}
