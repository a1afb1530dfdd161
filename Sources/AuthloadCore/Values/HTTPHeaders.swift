/// One header field, name and value as sent; look-ups by name through ``HTTPHeaders`` ignore case.
public struct HTTPField: Sendable, Hashable {
    public var name: String
    public var value: String

    public init(_ name: String, _ value: String) {
        self.name = name
        self.value = value
    }
}

/// An ordered list of header fields, as they appear on the wire.
///
/// Equality compares the fields as sent, names' case and order included. The comparison is on the
/// fields' bytes, so values that differ only in how they spell invalid UTF-8 are not equal.
///
/// The fields are kept as UTF-8 bytes in one array, plus where each name and value lies in it. Most responses'
/// headers are never read, so a parser hands over its header section as it arrived (``init(section:fields:)``),
/// separators and line ends included, and a `String` is made only when someone asks for a field.
///
/// ```swift
/// var headers: HTTPHeaders = ["Set-Cookie": "a=1", "Content-Type": "text/plain"]
/// headers.add("Set-Cookie", "b=2")
/// headers["content-type"]            // "text/plain"
/// headers.values(of: "set-cookie")   // ["a=1", "b=2"]
/// ```
public struct HTTPHeaders: Sendable, Hashable, Sequence, ExpressibleByDictionaryLiteral {
    /// Where one field's name and value lie in the bytes the fields are kept in.
    public struct Span: Sendable {
        // Int32 keeps a span at 16 bytes; no header section comes near 2 GiB.
        var nameStart: Int32
        var nameEnd: Int32
        var valueStart: Int32
        var valueEnd: Int32

        /// - Precondition: both ranges lie within the first 2 GiB.
        public init(name: Range<Int>, value: Range<Int>) {
            precondition(
                name.lowerBound >= 0 && value.lowerBound >= 0 && name.upperBound <= Int32.max && value.upperBound <= Int32.max,
                "header fields beyond 2 GiB")
            nameStart = Int32(truncatingIfNeeded: name.lowerBound)
            nameEnd = Int32(truncatingIfNeeded: name.upperBound)
            valueStart = Int32(truncatingIfNeeded: value.lowerBound)
            valueEnd = Int32(truncatingIfNeeded: value.upperBound)
        }

        public var name: Range<Int> { Int(nameStart)..<Int(nameEnd) }
        public var value: Range<Int> { Int(valueStart)..<Int(valueEnd) }
        var nameCount: Int32 { nameEnd - nameStart }
    }

    /// The names and values, in wire order. Fields added one by one lie back to back; a parsed section keeps the
    /// bytes between them too. Removing fields rebuilds it without them.
    private var bytes: [UInt8] = []
    private var spans: [Span] = []

    public init(_ fields: [HTTPField] = []) {
        for field in fields { add(field.name, field.value) }
    }

    public init(dictionaryLiteral elements: (String, String)...) {
        for (name, value) in elements { add(name, value) }
    }

    /// Fields that lie in one block of bytes, as a parser finds them: the block is kept whole and each field read
    /// from where `fields` says it lies, so a parsed header section costs one copy, not one per field.
    ///
    /// Nothing is checked or decoded here. Bytes that are not valid UTF-8 become U+FFFD only when a field is read as
    /// a `String`; a serializer replaces any byte that could end a line, as for every field.
    ///
    /// - Precondition: every span lies within `section`.
    public init(section: [UInt8], fields: [Span]) {
        // A span's own ranges are well-formed and start at 0 or later (its initializer checks); only their ends can
        // lie past the section.
        precondition(
            fields.allSatisfy { $0.nameEnd <= section.count && $0.valueEnd <= section.count }, "a header field outside its section")
        bytes = section
        spans = fields
    }

    /// The fields in wire order, each name and value made into a `String` on the spot.
    public var fields: [HTTPField] { Array(self) }

    /// The number of fields, repeats included.
    public var count: Int { spans.count }

    public var isEmpty: Bool { spans.isEmpty }

    // Exact, so that `fields` and `Array(headers)` allocate once.
    public var underestimatedCount: Int { spans.count }

    // MARK: Reading

    /// The first value of the named field (case-insensitive), as HTTP and STOMP both say the first wins.
    public subscript(name: String) -> String? {
        withNameMatcher(name) { matches in spans.first(where: matches) }.map { string(bytes[$0.value]) }
    }

    /// Every value of the named field, in order (e.g. several `Set-Cookie`).
    public func values(of name: String) -> [String] {
        withNameMatcher(name) { matches in spans.filter(matches) }.map { string(bytes[$0.value]) }
    }

    public func contains(_ name: String) -> Bool {
        withNameMatcher(name) { matches in spans.contains(where: matches) }
    }

    /// Calls `body` with the bytes of the named field's first value (case-insensitive name), or nil when there is none:
    /// for a reader that compares or looks up a value (a bearer token) without making a `String` of it.
    ///
    /// The buffer is valid only during the call.
    public func withFirstValue<Result>(of name: String, _ body: (UnsafeBufferPointer<UInt8>?) throws -> Result) rethrows -> Result {
        guard let span = withNameMatcher(name, { matches in spans.first(where: matches) }) else { return try body(nil) }
        return try bytes.withUnsafeBufferPointer { storage in try body(UnsafeBufferPointer(rebasing: storage[span.value])) }
    }

    /// Calls `body` with each field's name and value bytes in wire order, so a serializer makes no `String`.
    ///
    /// The buffers are valid only during the call.
    public func forEachField(_ body: (_ name: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) -> Void) {
        bytes.withUnsafeBytes { storage in
            for span in spans {
                body(UnsafeRawBufferPointer(rebasing: storage[span.name]), UnsafeRawBufferPointer(rebasing: storage[span.value]))
            }
        }
    }

    public func makeIterator() -> Iterator { Iterator(headers: self) }

    /// Makes each field's `HTTPField` as iteration reaches it.
    public struct Iterator: IteratorProtocol {
        let headers: HTTPHeaders
        var index = 0

        public mutating func next() -> HTTPField? {
            guard index < headers.spans.count else { return nil }
            let span = headers.spans[index]
            index += 1
            return HTTPField(headers.string(headers.bytes[span.name]), headers.string(headers.bytes[span.value]))
        }
    }

    // MARK: Changing

    public mutating func add(_ name: String, _ value: String) {
        // Grown once for both, and still geometrically: a request's headers are added one by one to an empty list, and
        // a long value (a bearer token) after its name grew it a second time. The first growth makes room for a
        // message's usual few fields at once (``minimumBytes``, ``minimumFields``): grown to fit, the bytes and the
        // spans were each reallocated at nearly every field added to a list, whether it started empty or shared (a
        // service's fixed headers, to which each answer adds its own).
        let needed = bytes.count + name.utf8.count + value.utf8.count
        if needed > bytes.capacity { bytes.reserveCapacity(Swift.max(needed, 2 * bytes.capacity, Self.minimumBytes)) }
        if spans.count == spans.capacity { spans.reserveCapacity(Swift.max(2 * spans.count, Self.minimumFields)) }
        let nameStart = bytes.count
        Self.append(name, to: &bytes)
        let valueStart = bytes.count
        Self.append(value, to: &bytes)
        spans.append(Span(name: nameStart..<valueStart, value: valueStart..<bytes.count))
    }

    /// The room a list that grows takes at least: a message's usual headers and their bytes.
    private static var minimumBytes: Int { 256 }
    private static var minimumFields: Int { 8 }

    /// Copies `text`'s UTF-8 as one block: appending its `utf8` view went through the generic sequence path, a
    /// look-up of contiguous storage for each string (a bearer token on every authorized call).
    @inline(__always)
    private static func append(_ text: String, to bytes: inout [UInt8]) {
        var text = text
        text.withUTF8 { bytes.append(contentsOf: $0) }
    }

    /// Adds a field from raw bytes, copied as they are: ``remove(_:)``'s rebuild, from fields already kept.
    private mutating func append(name: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) {
        let nameStart = bytes.count
        // Rebinding gives the typed buffer whose bulk copy is a memcpy.
        name.withMemoryRebound(to: UInt8.self) { bytes.append(contentsOf: $0) }
        let valueStart = bytes.count
        value.withMemoryRebound(to: UInt8.self) { bytes.append(contentsOf: $0) }
        spans.append(Span(name: nameStart..<valueStart, value: valueStart..<bytes.count))
    }

    /// Makes room for `fields` more fields holding `bytes` bytes of names and values in all.
    private mutating func reserveCapacity(bytes byteCount: Int, fields fieldCount: Int) {
        bytes.reserveCapacity(bytes.count + byteCount)
        spans.reserveCapacity(spans.count + fieldCount)
    }

    /// Replaces every field of that name with one field.
    public mutating func set(_ name: String, _ value: String) {
        remove(name)
        add(name, value)
    }

    public mutating func remove(_ name: String) {
        let kept: HTTPHeaders? = withNameMatcher(name) { matches in
            guard spans.contains(where: matches) else { return nil }
            // Rebuilt rather than left with holes, so a header set over and over does not keep growing.
            var kept = HTTPHeaders()
            kept.reserveCapacity(bytes: bytes.count, fields: spans.count)
            bytes.withUnsafeBytes { storage in
                for span in spans where !matches(span) {
                    kept.append(
                        name: UnsafeRawBufferPointer(rebasing: storage[span.name]),
                        value: UnsafeRawBufferPointer(rebasing: storage[span.value]))
                }
            }
            return kept
        }
        if let kept { self = kept }
    }

    // MARK: Bytes

    /// Decodes as the parser always has, so invalid UTF-8 gives the same U+FFFD replacements as before.
    private func string(_ bytes: ArraySlice<UInt8>) -> String {
        String(decoding: bytes, as: UTF8.self)
    }

    /// Calls `body` with a test of whether a field's name is `name` ignoring ASCII case, done on bytes so
    /// fields that do not match cost no `String`.
    private func withNameMatcher<Result>(_ name: String, _ body: ((Span) -> Bool) -> Result) -> Result {
        var name = name
        return name.withUTF8 { key in
            bytes.withUnsafeBufferPointer { storage in
                body { span in
                    guard span.nameCount == key.count else { return false }
                    var index = Int(span.nameStart)
                    for expected in key {
                        guard Self.lowercased(storage[index]) == Self.lowercased(expected) else { return false }
                        index += 1
                    }
                    return true
                }
            }
        }
    }

    @inline(__always)
    private static func lowercased(_ byte: UInt8) -> UInt8 {
        byte &- 0x41 < 26 ? byte | 0x20 : byte
    }

    // MARK: Equality

    // Defined on the fields, not the storage: a parsed section keeps the bytes between its fields, and
    // fields added one by one do not.
    public static func == (lhs: HTTPHeaders, rhs: HTTPHeaders) -> Bool {
        guard lhs.spans.count == rhs.spans.count else { return false }
        return lhs.bytes.withUnsafeBufferPointer { left in
            rhs.bytes.withUnsafeBufferPointer { right in
                zip(lhs.spans, rhs.spans).allSatisfy { a, b in
                    left[a.name].elementsEqual(right[b.name]) && left[a.value].elementsEqual(right[b.value])
                }
            }
        }
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(spans.count)
        bytes.withUnsafeBytes { storage in
            for span in spans {
                // The name's length tells `a: bc` from `ab: c`, whose bytes are the same.
                hasher.combine(span.nameCount)
                hasher.combine(span.valueEnd - span.valueStart)
                hasher.combine(bytes: UnsafeRawBufferPointer(rebasing: storage[span.name]))
                hasher.combine(bytes: UnsafeRawBufferPointer(rebasing: storage[span.value]))
            }
        }
    }
}

extension HTTPHeaders: CustomReflectable {
    /// Shows the fields, not the storage, so printed requests and test failures read as they always have.
    public var customMirror: Mirror {
        Mirror(self, children: ["fields": fields], displayStyle: .struct)
    }
}
