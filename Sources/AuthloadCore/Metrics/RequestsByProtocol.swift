/// HTTP requests counted by the version of HTTP that carried their answer (`result.json`'s
/// `httpRequestsByProtocol`, `{"h1": 1200, "h2": 0}`).
///
/// A request that got no answer (it timed out, its connection was reset) counts in a flow's `httpRequests` but in
/// neither version: the transport names the version of an answer, not of a failure. So `h1 + h2` is at most the
/// total, and the difference is ``unanswered(of:)``.
public struct RequestsByProtocol: Codable, Sendable, Hashable {
    public var h1: Int
    public var h2: Int

    public init(h1: Int = 0, h2: Int = 0) {
        self.h1 = h1
        self.h2 = h2
    }

    /// The requests carried by `version`.
    public subscript(version: HTTPVersion) -> Int {
        get {
            switch version {
            case .http1: h1
            case .http2: h2
            }
        }
        set {
            switch version {
            case .http1: h1 = newValue
            case .http2: h2 = newValue
            }
        }
    }

    /// Requests of `total` that got no answer, so no version.
    public func unanswered(of total: Int) -> Int { max(0, total - h1 - h2) }

    /// The counts as the reports give them, each figure written by `format`: `h1 1,200, h2 34`, and `, no answer 5`
    /// when some of `total` got none.
    public func text(total: Int, _ format: (Int) -> String) -> String {
        let unanswered = unanswered(of: total)
        return "h1 \(format(h1)), h2 \(format(h2))" + (unanswered > 0 ? ", no answer \(format(unanswered))" : "")
    }

    public static func + (lhs: RequestsByProtocol, rhs: RequestsByProtocol) -> RequestsByProtocol {
        RequestsByProtocol(h1: lhs.h1 + rhs.h1, h2: lhs.h2 + rhs.h2)
    }
}
