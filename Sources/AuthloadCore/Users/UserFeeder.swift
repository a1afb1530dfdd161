/// Where each virtual user's identity comes from: templates, or the rows of a CSV file.
///
/// A template is a text where `{n}` stands for the user's number (0-based) and `{n:9}` for it padded
/// with zeros to 9 digits; any column may have one (`"invitationCode": "1{n:8}"`). `{iteration}` (and
/// `{iteration:3}`) stands for the user's flow iteration (0-based), for data a server accepts only once: an
/// invitation code is redeemed by every iteration, so `"1{n:5}{iteration:3}"` gives each its own. A CSV file gives
/// each user a row: in order and wrapping round (`sequential`), a seeded random row (`random`), or a
/// row of its own (`unique`, which refuses to start more users than there are rows).
///
/// ```swift
/// let feeder = try UserFeeder.csv(text, fileName: "users.csv", assignment: .unique)
/// let identity = feeder.identity(for: 41)          // row 42
/// identity["invitationCode"]                        // that row's column
/// ```
public struct UserFeeder: Sendable, Equatable {
    public enum Assignment: String, Sendable, CaseIterable {
        case sequential, random, unique
    }

    private enum Source: Sendable, Equatable {
        case templates([String: String])
        case table(CSVTable, name: String)
    }

    private let source: Source
    public let assignment: Assignment
    private let seed: UInt64
    /// The templates, split into text and tokens once: an open-model arrival fills them for every new user, and
    /// parsing each template again (a split array, an integer parse) cost more than the filling.
    private let compiled: CompiledTemplates?

    /// `user{n}` with the password `demo-password`: what a profile without `users` gets.
    public init() {
        self.init(templates: ["username": "user{n}", "password": "demo-password"])
    }

    /// Every column from a template; `username` and `password` default as in ``init()``.
    public init(templates: [String: String]) {
        var columns = ["username": "user{n}", "password": "demo-password"]
        columns.merge(templates) { $1 }
        source = .templates(columns)
        assignment = .sequential
        seed = 0
        compiled = CompiledTemplates(columns)
    }

    /// Rows of a CSV file with a header row; it must have a `username` column.
    public static func csv(_ text: String, fileName: String, assignment: Assignment, seed: UInt64 = 1) throws(ProfileError) -> UserFeeder {
        let table = try CSVTable.parse(text, fileName: fileName)
        guard table.header.contains("username") else {
            throw ProfileError(fileName, "has no \"username\" column (columns: \(table.header.joined(separator: ", ")))")
        }
        return UserFeeder(source: .table(table, name: fileName), assignment: assignment, seed: seed)
    }

    private init(source: Source, assignment: Assignment, seed: UInt64) {
        self.source = source
        self.assignment = assignment
        self.seed = seed
        self.compiled = nil
    }

    /// The columns every identity has.
    public var columns: [String] {
        switch source {
        case .templates(let templates): templates.keys.sorted()
        case .table(let table, _): table.header
        }
    }

    /// How many users can get an identity of their own: unbounded for templates, the row count for `unique`.
    public var capacity: Int? {
        guard case .table(let table, _) = source, assignment == .unique else { return nil }
        return table.rows.count
    }

    /// The identity of user number `index` (0-based) in its flow iteration `iteration` (0-based; it matters only
    /// to templates with `{iteration}`, see ``variesByIteration``).
    ///
    /// - Precondition: under `unique` assignment, `index` is below ``capacity`` (checked by ``check(users:flowsNeeding:)``).
    public func identity(for index: Int, iteration: Int = 0) -> UserIdentity {
        switch source {
        case .templates(let templates):
            guard let compiled else { return UserIdentity(fields: templates.mapValues { Self.fill($0, n: index, iteration: iteration) }) }
            return UserIdentity(fields: compiled.fill(n: index, iteration: iteration))
        case .table(let table, _):
            let row: Int
            switch assignment {
            case .sequential: row = index % table.rows.count
            case .unique:
                precondition(index < table.rows.count, "unique user feeder exhausted (checked before the run)")
                row = index
            case .random:
                var random = SplitMix64(seed: seed ^ (UInt64(truncatingIfNeeded: index) &* 0x9E37_79B9_7F4A_7C15))
                row = Int(random.next() % UInt64(table.rows.count))
            }
            return UserIdentity(fields: Dictionary(uniqueKeysWithValues: zip(table.header, table.rows[row])))
        }
    }

    /// Makes `identity`, which this feeder made for some user, the identity of user number `index` in its first
    /// iteration, as ``identity(for:iteration:)`` would; templates are filled into its own storage, so an open-model
    /// worker renewing its user for each arrival allocates no new table.
    public func refill(_ identity: inout UserIdentity, for index: Int) {
        guard case .templates = source, let compiled else {
            identity = self.identity(for: index)
            return
        }
        compiled.refill(&identity.fields, n: index, iteration: 0)
    }

    /// Some template holds `{iteration}`: a user's identity must be filled again for each of its iterations.
    public var variesByIteration: Bool {
        guard case .templates(let templates) = source else { return false }
        return templates.keys.contains { variesByIteration($0) }
    }

    /// The column's value changes from one of a user's iterations to the next (a template with `{iteration}`);
    /// false for a CSV column, which gives a user one value for the whole run.
    public func variesByIteration(_ column: String) -> Bool {
        guard case .templates(let templates) = source, let template = templates[column] else { return false }
        var varies = false
        Self.forEachPart(of: template) { part in
            if case .iteration = part { varies = true }
        }
        return varies
    }

    /// Fails when a flow needs a column the users lack, or a unique feeder has fewer rows than `users`.
    ///
    /// - Parameter flowsNeeding: per flow (its profile path, e.g. `flows[1]`), the columns it reads.
    public func check(users: Int, flowsNeeding: [(path: String, columns: Set<String>)]) throws(ProfileError) {
        let available = Set(columns)
        for flow in flowsNeeding {
            if let missing = flow.columns.subtracting(available).sorted().first {
                let origin: String
                switch source {
                case .templates: origin = "users: no \"\(missing)\" template"
                case .table(_, let name): origin = "\(name) has no \"\(missing)\" column"
                }
                throw ProfileError(flow.path, "needs the user field \"\(missing)\" (\(origin); add it)")
            }
        }
        if let capacity, users > capacity, case .table(_, let name) = source {
            throw ProfileError(
                "users.assignment",
                "unique needs a row per user: \(name) has \(capacity) rows for \(users) users "
                    + "(add rows, lower load.users, or use sequential)")
        }
    }

    /// The widest zero-padding a template may ask for. A user number has at most 19 digits, so a wider
    /// `{n:W}` only pads with zeros, and a huge W would make every user allocate W bytes.
    public static let maxTemplateWidth = 64

    /// Why `template` cannot be used, or nil; the profile reader reports it against the template's field.
    public static func problem(inTemplate template: String) -> String? {
        var problem: String?
        forEachPart(of: template) { part in
            guard problem == nil else { return }
            switch part {
            case .number(let width) where width > maxTemplateWidth:
                problem = "{n:\(width)} pads to more than \(maxTemplateWidth) digits"
            case .iteration(let width) where width > maxTemplateWidth:
                problem = "{iteration:\(width)} pads to more than \(maxTemplateWidth) digits"
            default: break
            }
        }
        return problem
    }

    /// Replaces `{n}` with `n`, `{iteration}` with `iteration`, and `{n:W}`, `{iteration:W}` with them
    /// zero-padded to W digits.
    static func fill(_ template: String, n: Int, iteration: Int = 0) -> String {
        // Bytes, not characters: a template is filled for every open-model arrival, and walking it by character
        // (grapheme breaking) cost more than the filling.
        guard template.utf8.contains(UInt8(ascii: "{")) else { return template }
        var parts: [TemplatePart] = []
        forEachPart(of: template) { parts.append($0) }
        return fill(parts, n: n, iteration: iteration)
    }

    /// The text of a template split by ``forEachPart(of:_:)``, for user `n` in its iteration `iteration`.
    fileprivate static func fill(_ parts: [TemplatePart], n: Int, iteration: Int) -> String {
        var result = ""
        func append(_ value: Int, padded width: Int) {
            let digits = String(value)
            // Clamped as well as checked by the profile reader, so a template built in code cannot exhaust memory either.
            let zeros = max(0, min(width, maxTemplateWidth) - digits.utf8.count)
            if zeros > 0 { result += String(repeating: "0", count: zeros) }
            result += digits
        }
        for part in parts {
            switch part {
            case .text(let text): result += text
            case .number(let width): append(n, padded: width)
            case .iteration(let width): append(iteration, padded: width)
            }
        }
        return result
    }

    fileprivate enum TemplatePart: Sendable, Equatable {
        case text(Substring)
        /// `{n}` (width 0) or `{n:W}`.
        case number(width: Int)
        /// `{iteration}` (width 0) or `{iteration:W}`.
        case iteration(width: Int)
    }

    /// Splits a template into literal text and tokens; a `{` that starts no token is text.
    fileprivate static func forEachPart(of template: String, _ body: (TemplatePart) -> Void) {
        var rest = Substring(template)
        while let brace = rest.utf8.firstIndex(of: UInt8(ascii: "{")) {
            body(.text(rest[..<brace]))
            let token = rest[brace..<(rest[brace...].utf8.firstIndex(of: UInt8(ascii: "}")) ?? rest.endIndex)]
            let tokenBody = token.dropFirst() // "n", "n:9", "iteration" or "iteration:3"
            if token.endIndex < rest.endIndex {
                let parts = tokenBody.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
                let width = parts.count == 1 ? 0 : Int(parts[1])
                if let width, parts[0] == "n" || parts[0] == "iteration" {
                    body(parts[0] == "n" ? .number(width: width) : .iteration(width: width))
                    rest = rest[rest.index(after: token.endIndex)...]
                    continue
                }
            }
            body(.text("{"))
            rest = rest[rest.index(after: brace)...]
        }
        body(.text(rest))
    }
}

/// A feeder's templates as they are filled for each user: the columns without a token as they are, the others split
/// into text and tokens.
private struct CompiledTemplates: Sendable, Equatable {
    /// Every column, those with a token holding their template until filled; room for all of them, so the copy each
    /// identity makes is its only allocation.
    private let literal: [String: String]
    private let tokens: [Column]

    private struct Column: Sendable, Equatable {
        let name: String
        let parts: [UserFeeder.TemplatePart]
    }

    init(_ templates: [String: String]) {
        var literal = [String: String](minimumCapacity: templates.count)
        var tokens: [Column] = []
        for (name, template) in templates.sorted(by: { $0.key < $1.key }) {
            literal[name] = template
            guard template.utf8.contains(UInt8(ascii: "{")) else { continue }
            var parts: [UserFeeder.TemplatePart] = []
            UserFeeder.forEachPart(of: template) { parts.append($0) }
            tokens.append(Column(name: name, parts: parts))
        }
        self.literal = literal
        self.tokens = tokens
    }

    func fill(n: Int, iteration: Int) -> [String: String] {
        var fields = literal
        refill(&fields, n: n, iteration: iteration)
        return fields
    }

    /// Fills the templated columns of `fields`, which ``fill(n:iteration:)`` made, in place: no new storage when the
    /// caller holds the only copy.
    func refill(_ fields: inout [String: String], n: Int, iteration: Int) {
        for column in tokens { fields[column.name] = UserFeeder.fill(column.parts, n: n, iteration: iteration) }
    }
}

/// One user's data: `username`, `password`, and whatever other columns the feeder has.
///
/// The data sits in one immutable object: flows read a user's identity off its actor, and every read copies it, which
/// cost a retain (and a release) of each thing it holds; now one. `username` and `password` are kept beside the fields,
/// since every login reads them and a look-up hashed the key each time.
public struct UserIdentity: Sendable, Equatable {
    private var storage: Storage

    private final class Storage: Sendable {
        let fields: [String: String]
        let username: String
        let password: String

        init(_ fields: [String: String]) {
            self.fields = fields
            username = fields["username"] ?? ""
            password = fields["password"] ?? ""
        }
    }

    public init(fields: [String: String]) {
        storage = Storage(fields)
    }

    public init(username: String, password: String) {
        self.init(fields: ["username": username, "password": password])
    }

    public var fields: [String: String] {
        get { storage.fields }
        // Changed in place when this identity holds the only reference to its data (a feeder's refill): the old object
        // lets go of the table before the change, which then needs no copy of it.
        _modify {
            var fields = storage.fields
            storage = Self.placeholder
            defer { storage = Storage(fields) }
            yield &fields
        }
        set { storage = Storage(newValue) }
    }

    private static let placeholder = Storage([:])

    /// `fields["username"]`, or empty.
    public var username: String { storage.username }
    /// `fields["password"]`, or empty.
    public var password: String { storage.password }

    public static func == (a: UserIdentity, b: UserIdentity) -> Bool { a.storage === b.storage || a.fields == b.fields }

    public subscript(column: String) -> String? { storage.fields[column] }
}
