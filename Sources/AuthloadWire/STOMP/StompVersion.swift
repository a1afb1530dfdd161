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
        // Read as bytes in the header's own storage: a string per entry for every CONNECT was most of a staging server's
        // answer to it, and splitting its UTF-8 view still built an array of slices.
        var header = acceptVersion
        return header.withUTF8 { bytes in
            var best: StompVersion?
            var start = 0
            while start <= bytes.count {
                var end = start
                while end < bytes.count, bytes[end] != UInt8(ascii: ",") { end += 1 }
                // Spaces around an entry are tolerated; an entry left empty names no version.
                var low = start
                var high = end
                while low < high, bytes[low] == UInt8(ascii: " ") { low += 1 }
                while high > low, bytes[high - 1] == UInt8(ascii: " ") { high -= 1 }
                if let version = version(spelledBy: UnsafeBufferPointer(rebasing: bytes[low..<high])), supported.contains(version) {
                    best = max(best ?? version, version)
                }
                start = end + 1
            }
            return best
        }
    }

    /// What a server speaks unless told otherwise: 1.1 and 1.2.
    ///
    /// Kept, as ``all`` is: a literal default and `allCases` each built an array at every CONNECT.
    public static let spokenByDefault: [StompVersion] = [.v1_1, .v1_2]

    private static let all = allCases

    /// The version whose raw value is exactly `bytes`, or nil.
    private static func version(spelledBy bytes: UnsafeBufferPointer<UInt8>) -> StompVersion? {
        all.first { $0.rawValue.utf8.elementsEqual(bytes) }
    }
}
