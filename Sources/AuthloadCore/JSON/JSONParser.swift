extension JSONValue {
    /// How deeply arrays and objects may nest before parsing stops with an error.
    public static let maximumNestingDepth = 512

    /// Reads one JSON document (RFC 8259, strictly) from UTF-8 bytes.
    ///
    /// Contiguous collections such as `[UInt8]`, `ArraySlice<UInt8>` and `UnsafeRawBufferPointer`
    /// are read in place; anything else is copied into an array first. A leading UTF-8 byte-order
    /// mark is skipped, as RFC 8259 allows.
    ///
    /// - Throws: ``JSONParseError`` naming the line, column and byte offset of the first problem.
    public static func parse(_ bytes: some Collection<UInt8>) throws(JSONParseError) -> JSONValue {
        let result = bytes.withContiguousStorageIfAvailable { buffer in
            Result { () throws(JSONParseError) -> JSONValue in try JSONParser.parse(buffer) }
        }
        if let result { return try result.get() }
        return try parse(Array(bytes))
    }

    /// Reads one JSON document (RFC 8259, strictly) from text.
    ///
    /// - Throws: ``JSONParseError`` naming the line, column and byte offset of the first problem.
    public static func parse(_ text: String) throws(JSONParseError) -> JSONValue {
        var text = text
        return try text.withUTF8 { buffer in
            Result { () throws(JSONParseError) -> JSONValue in try JSONParser.parse(buffer) }
        }.get()
    }
}

/// Reads JSON from contiguous bytes: a whole document into a tree, or value by value for ``JSONReader``.
///
/// It keeps open arrays and objects on an explicit stack instead of recursing, so hostile nesting
/// costs a bounded amount of heap and never the thread's stack, even in debug builds. Every read
/// is checked against the end of the buffer: any input either parses or throws.
struct JSONParser {
    let bytes: UnsafeBufferPointer<UInt8>
    var position: Int
    /// Reused by every string that needs unescaping, so a document allocates one buffer for them.
    var scratch: [UInt8]
    /// The arrays and objects open at `position` around the innermost one (``top``), outermost first.
    var containers: JSONStack<Container>
    /// The innermost open array or object, when ``depth`` is above zero: kept apart from the stack, so that each member
    /// and element reads and marks it in place, where marking it in the stack checked the array's uniqueness.
    var top: Container
    /// How many arrays and objects are open.
    var depth: Int
    /// The decoded keys of every open object, each object's after its parent's, to find a repeated key: the first
    /// `keyCount` of them.
    var keys: JSONStack<Key>
    /// The arrays and objects ``readValue()`` is building, empty between its calls: kept so that the stack is taken
    /// with the others from the parse before.
    var building: [Building]
    var keyCount: Int
    /// The keys of each open object that outgrew a short linear scan, by depth, so hostile inputs stay linear to read.
    var keySets: [Int: Set<[UInt8]>]
    /// The key ``nextMember()`` read last, decoded (``currentKey``'s bytes).
    var lastKey: Key
    /// The keys decoded from escapes, freed by ``release()``.
    var decodedKeys: [UnsafeMutableBufferPointer<UInt8>]

    /// Sets every member itself, none by a default value: with defaults, the parser was built aside and copied out
    /// whole (every array and stack retained, then released) at each parse.
    init(bytes: UnsafeBufferPointer<UInt8>) {
        // Room for an ION body's nesting and open keys up front, when there are no stacks to take.
        let spare =
            Self.spareStacks.withLock { $0.popLast() } ?? Stacks(containers: JSONStack(capacity: 16), keys: JSONStack(capacity: 32))
        self.bytes = bytes
        position = Self.byteOrderMarkLength(bytes)
        scratch = []
        containers = spare.containers
        top = Container(isObject: false, firstKey: 0)
        depth = 0
        keys = spare.keys
        building = spare.building
        keyCount = 0
        keySets = [:]
        lastKey = Key(bytes: UnsafeBufferPointer(start: nil, count: 0), fingerprint: 0)
        decodedKeys = []
    }

    /// A finished parse's container, key and building stacks, emptied, for the next parse to take: a simulated soak
    /// parses a few hundred thousand bodies, and fresh stacks for each were 8 % of its allocations.
    struct Stacks: @unchecked Sendable {
        // Unchecked Sendable: the keys' pointers are into a finished parse's bytes and are never read again; a parse
        // writes each key before it reads it (only the first `keyCount` are read, and the count starts at zero).
        var containers: JSONStack<Container>
        var keys: JSONStack<Key>
        var building: [Building] = []
    }

    /// Stacks given back by ``release()``: as many as ever parsed at once (one per thread, or two for a reader that
    /// parses a value it has read), up to ``spareStackLimit``.
    static let spareStacks = Locked<[Stacks]>([])
    static var spareStackLimit: Int { 8 }

    static func parse(_ bytes: UnsafeBufferPointer<UInt8>) throws(JSONParseError) -> JSONValue {
        var parser = JSONParser(bytes: bytes)
        defer { parser.release() }
        let value = try parser.readValue()
        try parser.finish()
        return value
    }

    static func byteOrderMarkLength(_ bytes: UnsafeBufferPointer<UInt8>) -> Int {
        bytes.count >= 3 && bytes[0] == 0xEF && bytes[1] == 0xBB && bytes[2] == 0xBF ? 3 : 0
    }

    /// One array or object being built. Both storages live here so that closing one moves it out uniquely
    /// referenced, and appending to it never copies.
    struct Building {
        var elements: [JSONValue] = []
        var object = JSONObject()
        var key = ""
    }

    /// Reads the value at `position` into a tree.
    mutating func readValue() throws(JSONParseError) -> JSONValue {
        var building: [Building] = []
        swap(&building, &self.building)
        // Emptied, so a failed parse's half-built values go now and the next call starts from none.
        defer {
            building.removeAll(keepingCapacity: true)
            swap(&building, &self.building)
        }
        let depth = self.depth
        nextValue: while true {
            var value: JSONValue
            switch try valueStart() {
            case UInt8(ascii: "{"):
                try enter(object: true)
                guard try nextMember() else {
                    value = .object(JSONObject())
                    break
                }
                if building.capacity == 0 { building.reserveCapacity(16) }
                building.append(Building(key: currentKeyString))
                continue nextValue
            case UInt8(ascii: "["):
                try enter(object: false)
                guard try nextElement() else {
                    value = .array([])
                    break
                }
                if building.capacity == 0 { building.reserveCapacity(16) }
                building.append(Building())
                continue nextValue
            case .quote:
                value = .string(try readString())
            case UInt8(ascii: "t"):
                value = .bool(true)
                try expectLiteral("true")
            case UInt8(ascii: "f"):
                value = .bool(false)
                try expectLiteral("false")
            case UInt8(ascii: "n"):
                value = .null
                try expectLiteral("null")
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                value = .number(try readNumber())
            default:
                throw unexpected("expected a JSON value")
            }

            // The value is complete: add it to its container and close every container that ends here.
            while self.depth > depth {
                let top = building.count - 1
                if self.top.isObject {
                    // Moved, not copied: a retain and a release for every member and element add up over a document.
                    var key = ""
                    swap(&key, &building[top].key)
                    building[top].object.appendNew(consume key, consume value)
                    if try nextMember() {
                        building[top].key = currentKeyString
                        continue nextValue
                    }
                    value = .object(building.removeLast().object)
                } else {
                    if building[top].elements.capacity == 0 { building[top].elements.reserveCapacity(4) }
                    building[top].elements.append(consume value)
                    if try nextElement() { continue nextValue }
                    value = .array(building.removeLast().elements)
                }
            }
            return value
        }
    }

    mutating func consume(_ byte: UInt8) -> Bool {
        guard position < bytes.count, bytes[position] == byte else { return false }
        position += 1
        return true
    }

    func error(at offset: Int, _ message: String) -> JSONParseError {
        JSONParseError(at: offset, in: bytes, message)
    }

    /// An error at the current position: `<expectation>, found <what is there>`.
    func unexpected(_ expectation: String, at offset: Int? = nil) -> JSONParseError {
        let offset = offset ?? position
        return error(at: offset, "\(expectation), found \(JSONParseError.found(at: offset, in: bytes))")
    }
}
