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
    public static func negotiate(acceptVersion: String?, supported: [StompVersion] = spokenByDefault) -> StompVersion? {
        guard let acceptVersion else { return supported.contains(.v1_0) ? .v1_0 : nil }
        // Read as bytes: a string per entry for every CONNECT was most of a staging server's answer to it.
        var best: StompVersion?
        for entry in acceptVersion.utf8.split(separator: UInt8(ascii: ","), omittingEmptySubsequences: true) {
            guard let version = version(spelledBy: trimmingSpaces(entry)), supported.contains(version) else { continue }
            best = max(best ?? version, version)
        }
        return best
    }

    /// What a server speaks unless told otherwise: 1.1 and 1.2.
    ///
    /// Kept, as ``all`` is: a literal default and `allCases` each built an array at every CONNECT.
    public static let spokenByDefault: [StompVersion] = [.v1_1, .v1_2]

    private static let all = allCases

    /// The version whose raw value is exactly `bytes`, or nil.
    private static func version(spelledBy bytes: Substring.UTF8View) -> StompVersion? {
        all.first { $0.rawValue.utf8.elementsEqual(bytes) }
    }

    private static func trimmingSpaces(_ text: Substring.UTF8View) -> Substring.UTF8View {
        var text = text
        while text.first == UInt8(ascii: " ") { text.removeFirst() }
        while text.last == UInt8(ascii: " ") { text.removeLast() }
        return text
    }
}
