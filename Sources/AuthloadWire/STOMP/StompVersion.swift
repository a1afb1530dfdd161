/// A STOMP protocol version, as written in `accept-version` and `version` headers.
public enum StompVersion: String, Sendable, Hashable, CaseIterable, Comparable {
    case v1_0 = "1.0"
    case v1_1 = "1.1"
    case v1_2 = "1.2"

    public static func < (lhs: Self, rhs: Self) -> Bool {
        // Single-digit "major.minor" spellings sort as text in version order.
        lhs.rawValue < rhs.rawValue
    }

    /// Picks the highest version that the client accepts and the server supports; nil means the server
    /// must answer ERROR and close.
    ///
    /// An absent `accept-version` header means the client speaks only 1.0 (STOMP 1.2 §CONNECT). Unknown
    /// entries such as `2.0` are ignored, and spaces around entries tolerated.
    ///
    /// - Parameters:
    ///   - acceptVersion: The CONNECT frame's `accept-version` header, e.g. `"1.1,1.2"`, or nil if absent.
    ///   - supported: What the server speaks. The default leaves out 1.0, whose unescaped headers this
    ///     codec does not write; 1.1's escapes are a subset of 1.2's, so one codec serves both.
    ///
    /// ```swift
    /// guard let version = StompVersion.negotiate(acceptVersion: connect.headers["accept-version"]) else {
    ///     return [.error(message: "Supported protocol versions are 1.1,1.2")]
    /// }
    /// return [.connected(version: version)]
    /// ```
    public static func negotiate(acceptVersion: String?, supported: [StompVersion] = [.v1_1, .v1_2]) -> StompVersion? {
        guard let acceptVersion else { return supported.contains(.v1_0) ? .v1_0 : nil }
        return acceptVersion.split(separator: ",", omittingEmptySubsequences: true)
            .compactMap { StompVersion(rawValue: String(trimmingSpaces($0))) }
            .filter(supported.contains)
            .max()
    }

    private static func trimmingSpaces(_ text: Substring) -> Substring {
        var text = text
        while text.first == " " { text.removeFirst() }
        while text.last == " " { text.removeLast() }
        return text
    }
}
