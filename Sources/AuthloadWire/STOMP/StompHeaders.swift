/// Ordered header fields of a frame, with repeats kept and lookup by name returning the first.
///
/// STOMP 1.2 says that when a header repeats, only the first occurrence counts, but a proxy must pass
/// all of them on; so every field is kept in wire order and ``subscript(_:)`` answers with the first.
///
/// ```swift
/// var headers: StompHeaders = ["destination": "/user/queue", "id": "0"]
/// headers.append("id", "1")
/// headers["id"]                  // "0"
/// headers.values(for: "id")      // ["0", "1"]
/// ```
public struct StompHeaders: Sendable, Hashable, RandomAccessCollection, ExpressibleByDictionaryLiteral {
    public typealias Element = (name: String, value: String)

    private var fields: [Element]

    /// Creates an empty header list.
    public init() { fields = [] }

    /// Creates an empty header list with room for `capacity` fields.
    public init(reservingCapacity capacity: Int) {
        fields = []
        fields.reserveCapacity(capacity)
    }

    /// Creates a header list holding `fields` in the given order, repeats included.
    public init(_ fields: [Element]) { self.fields = fields }

    /// Creates a header list from a literal; unlike a `Dictionary`, order and repeated names are kept.
    public init(dictionaryLiteral elements: (String, String)...) {
        fields = elements.map { (name: $0.0, value: $0.1) }
    }

    public var startIndex: Int { fields.startIndex }
    public var endIndex: Int { fields.endIndex }
    public subscript(position: Int) -> Element { fields[position] }

    /// The value of the first header called `name` (names are case-sensitive), or nil when there is none.
    public subscript(name: String) -> String? {
        for field in fields where field.name == name { return field.value }
        return nil
    }

    /// Every value of the headers called `name`, in wire order.
    public func values(for name: String) -> [String] {
        fields.filter { $0.name == name }.map(\.value)
    }

    /// Whether a header called `name` is present.
    public func contains(_ name: String) -> Bool { self[name] != nil }

    /// Adds a header after the existing ones; an earlier header with the same name still wins on lookup.
    public mutating func append(_ name: String, _ value: String) {
        fields.append((name: name, value: value))
    }

    // Tuples are not Hashable, so equality and hashing walk the fields by hand.
    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.fields.count == rhs.fields.count
            && zip(lhs.fields, rhs.fields).allSatisfy { $0.name == $1.name && $0.value == $1.value }
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(fields.count)
        for field in fields {
            hasher.combine(field.name)
            hasher.combine(field.value)
        }
    }
}

extension StompHeaders: CustomStringConvertible {
    /// The fields as `name:value` pairs, unescaped, for logs and test failures; long values are cut at 64 characters
    /// so that a hostile frame cannot flood a log.
    public var description: String {
        let shown = fields.prefix(16).map { field in
            let value = field.value.count > 64 ? field.value.prefix(64) + "…" : Substring(field.value)
            return "\(field.name):\(value)"
        }
        return "[" + shown.joined(separator: ", ") + (fields.count > 16 ? ", … \(fields.count - 16) more]" : "]")
    }
}
