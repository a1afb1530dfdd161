/// A JSON document, or any part of one: what profiles and HTTP bodies parse into and serialize from.
///
/// Numbers are `Double`s, so integers are exact up to 2^53. Literals build values directly:
///
/// ```swift
/// let body: JSONValue = ["username": "1001", "password": "secret", "remember": true]
/// request.body = body.serialized()
///
/// let reply = try JSONValue.parse(response.body)
/// guard let session = reply["sessionid"]?.stringValue else { … }
/// ```
public enum JSONValue: Sendable, Hashable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object(JSONObject)
}

extension JSONValue {
    public var isNull: Bool { self == .null }

    public var boolValue: Bool? {
        if case .bool(let bool) = self { bool } else { nil }
    }

    public var numberValue: Double? {
        if case .number(let number) = self { number } else { nil }
    }

    /// The number as an `Int`, or nil when it is not a number, has a fraction, or does not fit.
    public var intValue: Int? {
        if case .number(let number) = self { Int(exactly: number) } else { nil }
    }

    public var stringValue: String? {
        if case .string(let string) = self { string } else { nil }
    }

    public var arrayValue: [JSONValue]? {
        if case .array(let array) = self { array } else { nil }
    }

    public var objectValue: JSONObject? {
        if case .object(let object) = self { object } else { nil }
    }

    /// The member named `key`, or nil when it is absent or this is not an object.
    public subscript(key: String) -> JSONValue? {
        if case .object(let object) = self { object[key] } else { nil }
    }

    /// The element at `index`, or nil when it is out of range or this is not an array.
    public subscript(index: Int) -> JSONValue? {
        guard case .array(let array) = self, array.indices.contains(index) else { return nil }
        return array[index]
    }

    /// What kind of value this is, with its article, ready for messages such as "expected a string, found a number".
    public var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .number: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }
}

extension JSONValue: CustomStringConvertible {
    /// The compact serialization, so test failures and debugging show the JSON itself.
    public var description: String { serializedString }
}

extension JSONValue: ExpressibleByNilLiteral {
    public init(nilLiteral: ()) { self = .null }
}

extension JSONValue: ExpressibleByBooleanLiteral {
    public init(booleanLiteral value: Bool) { self = .bool(value) }
}

extension JSONValue: ExpressibleByIntegerLiteral {
    public init(integerLiteral value: Int) { self = .number(Double(value)) }
}

extension JSONValue: ExpressibleByFloatLiteral {
    public init(floatLiteral value: Double) { self = .number(value) }
}

extension JSONValue: ExpressibleByStringLiteral {
    public init(stringLiteral value: String) { self = .string(value) }
}

extension JSONValue: ExpressibleByArrayLiteral {
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
}

extension JSONValue: ExpressibleByDictionaryLiteral {
    /// Keeps the literal's key order; a repeated key keeps its first position and its last value.
    public init(dictionaryLiteral elements: (String, JSONValue)...) { self = .object(JSONObject(elements)) }
}
