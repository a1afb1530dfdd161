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

    /// The error on one line. Paths and messages quote the profile's own keys and values, so line breaks
    /// and other control characters in them are written as escapes (`\n`, `\u{1B}`): a key like `"c\nnect"`
    /// must not split the line a CI log greps, nor send escape sequences to a terminal.
    public var description: String {
        let text = path.isEmpty ? message : "\(path): \(message)"
        guard text.unicodeScalars.contains(where: Self.needsEscape) else { return text }
        var escaped = ""
        for scalar in text.unicodeScalars {
            if Self.needsEscape(scalar) { escaped += scalar.escaped(asASCII: true) } else { escaped.unicodeScalars.append(scalar) }
        }
        return escaped
    }

    private static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .control, .lineSeparator, .paragraphSeparator: true
        default: false
        }
    }
}
