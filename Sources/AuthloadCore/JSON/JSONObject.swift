/// The members of a JSON object in the order they were written, looked up by key.
///
/// Profiles are echoed into reports in the user's order, so iteration, ``keys`` and serialization
/// keep it. Keys are unique: ``set(_:_:)`` replaces a value where its key already stands.
/// Equality follows JSON, where members have no order: two objects are equal when they hold the
/// same keys with equal values, in any order.
///
/// ```swift
/// var body: JSONObject = ["username": "1001"]
/// body.set("password", "secret")
/// body.keys          // ["username", "password"]
/// body["username"]   // .string("1001")
/// ```
public struct JSONObject: Sendable, Hashable, Sequence, ExpressibleByDictionaryLiteral {
    public typealias Element = (key: String, value: JSONValue)

    struct Member: Sendable {
        var key: String
        var value: JSONValue
    }

    private var members: [Member]
    /// Positions by key, built only once an object outgrows a short linear scan, so large or hostile
    /// inputs stay linear to parse while login bodies with a few keys never allocate a dictionary.
    private var positions: [String: Int]?

    private static let indexThreshold = 12

    public init() {
        members = []
        positions = nil
    }

    /// A repeated key keeps its first position and its last value.
    public init(_ pairs: [(String, JSONValue)]) {
        self.init()
        members.reserveCapacity(pairs.count)
        for (key, value) in pairs { set(key, value) }
    }

    public init(dictionaryLiteral elements: (String, JSONValue)...) { self.init(elements) }

    public var count: Int { members.count }
    public var isEmpty: Bool { members.isEmpty }
    public var keys: [String] { members.map(\.key) }
    public var values: [JSONValue] { members.map(\.value) }

    /// The value for `key`; assigning nil removes the member, assigning a value calls ``set(_:_:)``.
    public subscript(key: String) -> JSONValue? {
        get { position(of: key).map { members[$0].value } }
        set {
            if let newValue { set(key, newValue) } else { removeValue(forKey: key) }
        }
    }

    /// Replaces the value of an existing key in place, or appends a new member at the end.
    public mutating func set(_ key: String, _ value: JSONValue) {
        if let index = position(of: key) {
            members[index].value = value
        } else {
            appendNew(key, value)
        }
    }

    @discardableResult
    public mutating func removeValue(forKey key: String) -> JSONValue? {
        guard let index = position(of: key) else { return nil }
        let removed = members.remove(at: index)
        // Every later member moved down one place; rebuilding is simpler than patching and removal is rare.
        positions = nil
        buildIndexIfLarge()
        return removed.value
    }

    func position(of key: String) -> Int? {
        if let positions { return positions[key] }
        return members.firstIndex { $0.key == key }
    }

    /// Adds a member whose key the caller has already checked is absent, as the parser does.
    mutating func appendNew(_ key: consuming String, _ value: consuming JSONValue) {
        // Growing one by one would reallocate at 1, 2 and 4 members; bodies usually have two to four.
        if members.capacity == 0 { members.reserveCapacity(4) }
        if positions != nil {
            positions?[copy key] = members.count
            members.append(Member(key: key, value: value))
        } else {
            members.append(Member(key: key, value: value))
            buildIndexIfLarge()
        }
    }

    private mutating func buildIndexIfLarge() {
        guard members.count > Self.indexThreshold else { return }
        var index = [String: Int](minimumCapacity: members.count)
        for (offset, member) in members.enumerated() { index[member.key] = offset }
        positions = index
    }

    public func makeIterator() -> Iterator { Iterator(base: members.makeIterator()) }

    /// Yields `(key, value)` pairs in written order.
    public struct Iterator: IteratorProtocol {
        var base: IndexingIterator<[Member]>

        public mutating func next() -> Element? {
            base.next().map { (key: $0.key, value: $0.value) }
        }
    }

    public static func == (lhs: JSONObject, rhs: JSONObject) -> Bool {
        lhs.count == rhs.count && lhs.members.allSatisfy { rhs[$0.key] == $0.value }
    }

    public func hash(into hasher: inout Hasher) {
        // Equal objects may list members in different orders, so combine them commutatively, as Set does.
        var sum = 0
        for member in members {
            var memberHasher = Hasher()
            memberHasher.combine(member.key)
            memberHasher.combine(member.value)
            sum &+= memberHasher.finalize()
        }
        hasher.combine(members.count)
        hasher.combine(sum)
    }
}
