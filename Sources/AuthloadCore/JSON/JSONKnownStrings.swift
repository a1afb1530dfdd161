/// Strings a ``JSONReader`` hands out as they are, instead of making them anew from the bytes it read.
///
/// A `String` longer than fifteen bytes has storage of its own, allocated when it is made and freed when it goes:
/// a client reading the same media types, remediation names and paths out of every answer paid for each of them.
/// A string read with ``JSONReader/string(known:)`` that equals one of these, byte for byte, is that one, whose
/// storage (a literal's) is never allocated or freed; shorter strings are made in place anyway and are not kept.
///
/// ```swift
/// static let mediaTypes = JSONKnownStrings(["application/json; okta-version=1.0.0"])
/// accepts = try reader.string(known: Self.mediaTypes)
/// ```
public struct JSONKnownStrings: Sendable {
    private let strings: [String]
    /// The UTF-8 of `strings`, back to back, and where each starts and how long it is.
    private let utf8: [UInt8]
    private let spans: [(start: Int, count: Int)]

    /// The longest a `String` is made without storage of its own (a small string, on 64-bit platforms).
    static var smallLimit: Int { 15 }

    public init(_ strings: [String]) {
        var kept: [String] = []
        var utf8: [UInt8] = []
        var spans: [(start: Int, count: Int)] = []
        for string in strings where string.utf8.count > Self.smallLimit && !kept.contains(string) {
            kept.append(string)
            spans.append((utf8.count, string.utf8.count))
            utf8 += string.utf8
        }
        self.strings = kept
        self.utf8 = utf8
        self.spans = spans
    }

    /// The known string whose UTF-8 is `bytes`, if any.
    func string(equalTo bytes: UnsafeBufferPointer<UInt8>) -> String? {
        guard bytes.count > Self.smallLimit else { return nil }
        return utf8.withUnsafeBufferPointer { utf8 in
            for (index, span) in spans.enumerated() where span.count == bytes.count {
                if JSONParser.equalBytes(utf8.baseAddress! + span.start, bytes.baseAddress, span.count) { return strings[index] }
            }
            return nil
        }
    }
}
