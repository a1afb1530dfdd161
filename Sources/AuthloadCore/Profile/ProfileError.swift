/// A problem with a profile, stated as the field it is in and what is wrong, on one line.
///
/// ```
/// load.users: must be greater than 0
/// profile.json: line 7, column 3: expected ',' or '}' after object member, found '"'
/// ```
public struct ProfileError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The dotted field path (`load.users`, `flows[1].kind`), or the file name for JSON syntax errors.
    public var path: String
    public var message: String

    public init(_ path: String, _ message: String) {
        self.path = path
        self.message = message
    }

    public var description: String { path.isEmpty ? message : "\(path): \(message)" }
}
