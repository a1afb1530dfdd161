/// One header field as HPACK carries it, with how the encoder may index it.
///
/// Names and values are Strings because every caller in authload builds and reads them as text;
/// bytes that are not UTF-8 decode with replacement characters, which RFC 9113 §8.2.1 field values
/// (visible ASCII and obs-text) only meet in obs-text.
public struct HPACKHeader: Sendable, Hashable, CustomStringConvertible {
    /// Whether a field may enter the dynamic table, as RFC 7541 §6.2 distinguishes.
    public enum Indexing: Sendable, Hashable {
        /// Added to the dynamic table, so a repeat costs one byte.
        case incremental
        /// Sent literally and not added, for values that will not repeat.
        case withoutIndexing
        /// Sent literally and marked so no intermediary indexes it either: secrets such as a password form's cookie.
        case never
    }

    public var name: String
    public var value: String
    public var indexing: Indexing

    public init(_ name: String, _ value: String, indexing: Indexing = .incremental) {
        self.name = name
        self.value = value
        self.indexing = indexing
    }

    /// The size RFC 7541 §4.1 charges an entry: its octets plus 32.
    public var size: Int { name.utf8.count + value.utf8.count + 32 }

    public var description: String { "\(name): \(value)" }
}
