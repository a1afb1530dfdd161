/// Reads one JSON value of a profile while remembering where it is, so every error names its field.
///
/// Objects are read strictly: a key the reader was not asked for is reported by ``rejectUnknownKeys()``,
/// because a misspelt option silently falling back to a default is the worst kind of profile bug.
public struct ProfileReader: Sendable {
    public let path: String
    public let value: JSONValue

    public init(path: String, value: JSONValue) {
        self.path = path
        self.value = value
    }

    public func error(_ message: String) -> ProfileError { ProfileError(path, message) }

    private func childPath(_ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }

    public func object() throws(ProfileError) -> JSONObject {
        guard let object = value.objectValue else { throw error("expected an object, found \(value.typeName)") }
        return object
    }

    /// The member `key`, or nil when it is absent or `null`.
    public func optional(_ key: String) throws(ProfileError) -> ProfileReader? {
        guard let member = try object()[key], member != .null else { return nil }
        return ProfileReader(path: childPath(key), value: member)
    }

    public func required(_ key: String) throws(ProfileError) -> ProfileReader {
        guard let member = try optional(key) else { throw ProfileError(childPath(key), "is required") }
        return member
    }

    public func rejectUnknownKeys(allowed: Set<String>) throws(ProfileError) {
        for key in try object().keys where !allowed.contains(key) {
            let hint = allowed.sorted().joined(separator: ", ")
            throw ProfileError(childPath(key), "unknown field (expected one of: \(hint))")
        }
    }

    public func elements() throws(ProfileError) -> [ProfileReader] {
        guard let array = value.arrayValue else { throw error("expected an array, found \(value.typeName)") }
        return array.enumerated().map { ProfileReader(path: "\(path)[\($0.offset)]", value: $0.element) }
    }

    public func string() throws(ProfileError) -> String {
        guard let string = value.stringValue else { throw error("expected a string, found \(value.typeName)") }
        return string
    }

    public func bool() throws(ProfileError) -> Bool {
        guard let bool = value.boolValue else { throw error("expected true or false, found \(value.typeName)") }
        return bool
    }

    public func double() throws(ProfileError) -> Double {
        guard let number = value.numberValue else { throw error("expected a number, found \(value.typeName)") }
        return number
    }

    public func int() throws(ProfileError) -> Int {
        guard let number = value.numberValue else { throw error("expected a whole number, found \(value.typeName)") }
        guard let int = value.intValue else { throw error("expected a whole number, found \(number)") }
        return int
    }

    public func positiveInt() throws(ProfileError) -> Int {
        let int = try int()
        guard int > 0 else { throw error("must be greater than 0, found \(int)") }
        return int
    }

    public func nonNegativeInt() throws(ProfileError) -> Int {
        let int = try int()
        guard int >= 0 else { throw error("must be 0 or more, found \(int)") }
        return int
    }

    public func fraction() throws(ProfileError) -> Double {
        let number = try double()
        guard (0...1).contains(number) else { throw error("must be between 0 and 1, found \(number)") }
        return number
    }

    public func duration() throws(ProfileError) -> Duration {
        let text = try string()
        guard let duration = DurationText.parse(text) else {
            throw error("\"\(text)\" is not a duration (write e.g. 250ms, 30s, 2m, 1h)")
        }
        return duration
    }

    public func positiveDuration() throws(ProfileError) -> Duration {
        let duration = try duration()
        guard duration > .zero else { throw error("must be longer than 0s") }
        return duration
    }

    public func oneOf(_ choices: [String]) throws(ProfileError) -> String {
        let text = try string()
        guard choices.contains(text) else {
            throw error("\"\(text)\" is not one of: \(choices.joined(separator: ", "))")
        }
        return text
    }
}
