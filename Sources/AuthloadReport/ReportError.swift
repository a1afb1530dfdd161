/// A report that could not be written or a `result.json` that could not be read, naming the file and the problem.
///
/// ```
/// Reports/nightly/result.json: not valid JSON: Invalid value around line 3, column 11.
/// Reports/nightly/result.json: missing field "environment.cores"
/// ```
public struct ReportError: Error, Sendable, Equatable, CustomStringConvertible {
    private enum Code: Sendable, Equatable {
        case unreadable, invalidJSON, unexpectedContent, unsupportedSchema, unwritable
    }

    private let code: Code
    /// The file (or directory) the problem is about, as the caller named it.
    public let path: String
    /// What is wrong, in words for the person running authload.
    public let message: String

    private init(_ code: Code, _ path: String, _ message: String) {
        self.code = code
        self.path = path
        self.message = message
    }

    public var description: String { "\(path): \(message)" }

    static func unreadable(_ path: String, _ reason: String) -> Self {
        .init(.unreadable, path, "cannot read: \(reason)")
    }

    static func invalidJSON(_ path: String, _ reason: String) -> Self {
        .init(.invalidJSON, path, "not valid JSON: \(reason)")
    }

    static func unexpectedContent(_ path: String, _ reason: String) -> Self {
        .init(.unexpectedContent, path, reason)
    }

    static func unsupportedSchema(_ path: String, found: Int, supported: Int) -> Self {
        .init(
            .unsupportedSchema, path,
            "schemaVersion \(found) is not supported (this authload reads \(supported)); use the authload that wrote it")
    }

    static func unwritable(_ path: String, _ reason: String) -> Self {
        .init(.unwritable, path, "cannot write: \(reason)")
    }
}
