/// A JSON object written member by member straight into bytes: what serializing a ``JSONValue`` object with the same
/// members in the same order writes, without building the object.
///
/// For bodies made at every request of a run (a login's credentials, a service's answer, a token's claims), where
/// building the tree and then walking it cost more than the bytes.
///
/// ```swift
/// var body = JSONObjectWriter(reservingCapacity: 64)
/// body.add("username", username)
/// body.add("password", password)
/// request.body = body.finish()   // {"username":"…","password":"…"}
/// ```
public struct JSONObjectWriter {
    private var bytes: [UInt8] = []

    public init(reservingCapacity capacity: Int) {
        bytes.reserveCapacity(capacity)
    }

    /// Appends the member `key: value`, both escaped as ``JSONValue/write(to:)`` escapes them.
    public mutating func add(_ key: String, _ value: JSONValue) {
        bytes.append(bytes.isEmpty ? UInt8(ascii: "{") : UInt8(ascii: ","))
        JSONValue.string(key).write(to: &bytes)
        bytes.append(UInt8(ascii: ":"))
        value.write(to: &bytes)
    }

    /// Appends the string member `key: value`.
    public mutating func add(_ key: String, _ value: String) {
        add(key, .string(value))
    }

    /// The object's bytes, closed (`{}` when no member was added).
    public consuming func finish() -> [UInt8] {
        if bytes.isEmpty { bytes.append(UInt8(ascii: "{")) }
        bytes.append(UInt8(ascii: "}"))
        return bytes
    }
}
