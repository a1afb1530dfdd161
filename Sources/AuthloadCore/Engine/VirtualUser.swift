/// One simulated user: an actor that owns its session between and within flow iterations.
///
/// Flows run isolated to their user, so the session needs no locks. Metrics never go through the actor.
///
/// The actor runs on the executor its transport offers (the event loop that carries its requests, so a
/// request and its response cost no thread hop), or else serially on an executor of its own, like any actor.
public actor VirtualUser {
    /// The user's number, 0-based; it picks the identity and the metrics shard. An open-model worker renews its user
    /// for each arrival (``renew(index:users:seed:)``), so it is read on the actor.
    public private(set) var index: Int
    /// The user's data for its current flow iteration: filled once, or again for each iteration when a template
    /// holds `{iteration}` (``UserFeeder/variesByIteration``).
    public internal(set) var identity: UserIdentity
    /// Flow iterations this user has begun before the current one: the `{iteration}` of its templates.
    public internal(set) var iterations = 0
    public var cookies = CookieJar()
    /// The FCSDK session token of the current login, if any.
    public var sessionID: String?
    /// Seeded per user so runs repeat; flows may draw from it too.
    public var random: SplitMix64
    /// Flows in a row that could not connect to the target (``Outcome/isConnectionFailure``); the user waits
    /// ``ConnectionBackoff`` longer before its next flow while it is above 0, and any other outcome resets it.
    var connectionFailures = 0
    /// The user's client when its connections last its whole life (`connections.lifetime` `user`); nil otherwise,
    /// and between its lives.
    var client: (any HTTPClient)?
    /// Where the actor runs; `executorOwner` keeps it alive, since an unowned reference does not.
    private nonisolated let executor: UnownedSerialExecutor
    private nonisolated let executorOwner: any AnyObject & Sendable

    /// - Parameter executor: where the actor runs; by default, on an executor of its own.
    public init(index: Int, identity: UserIdentity, seed: UInt64, executor: (any SerialExecutor)? = nil) {
        self.index = index
        self.identity = identity
        self.random = Self.random(index: index, seed: seed)
        if let executor {
            self.executor = executor.asUnownedSerialExecutor()
            self.executorOwner = executor
        } else {
            // A plain actor's executor, lent to the user: it is scheduled exactly as a plain actor is.
            let own = OwnIsolation()
            self.executor = own.unownedExecutor
            self.executorOwner = own
        }
    }

    public nonisolated var unownedExecutor: UnownedSerialExecutor { executor }

    /// Makes this actor user number `index` in its first iteration, as a new one made with the same arguments would
    /// be: what an open-model worker does for each arrival, whose task runs isolated to its user from one arrival to
    /// the next (a new actor per arrival cost its allocation and two executor switches to enter and leave it).
    ///
    /// - Parameter users: the feeder that made this user's identity.
    /// - Precondition: the user's life has ended (``Runner/leave(_:)`` let go of its client).
    func renew(index: Int, users: UserFeeder, seed: UInt64) {
        precondition(client == nil, "a user renewed while it holds a client")
        self.index = index
        users.refill(&identity, for: index)
        iterations = 0
        cookies = CookieJar()
        sessionID = nil
        random = Self.random(index: index, seed: seed)
        connectionFailures = 0
    }

    private static func random(index: Int, seed: UInt64) -> SplitMix64 {
        SplitMix64(seed: seed ^ (UInt64(truncatingIfNeeded: index) &* 0xD1B5_4A32_D192_ED03))
    }
}

/// The isolation of a user whose transport offers no executor: an actor with nothing in it but its executor.
private actor OwnIsolation {}

/// The cookies a user's server has set, bounded so a misbehaving server cannot grow it without limit.
public struct CookieJar: Sendable, Equatable {
    public static let capacity = 64
    private var cookies: [(name: String, value: String)] = []

    public init() {}

    public var isEmpty: Bool { cookies.isEmpty }
    public var count: Int { cookies.count }

    public func value(of name: String) -> String? { cookies.first { $0.name == name }?.value }

    /// Stores every `Set-Cookie` of a response (attributes such as Path and Expires are not modelled).
    public mutating func store(from headers: HTTPHeaders) {
        for header in headers.values(of: "Set-Cookie") {
            guard let (name, value) = Self.pair(in: header) else { continue }
            cookies.removeAll { $0.name == name }
            if cookies.count == Self.capacity { cookies.removeFirst() }
            cookies.append((name, value))
        }
    }

    /// The cookie's name and value: what comes before the first `;`, split at its first `=`, without the spaces around
    /// either; nil without an `=` or a name.
    ///
    /// A header of ASCII only (every cookie a server sets, RFC 6265) is read as bytes, as reading it `Character` by
    /// `Character` would, only without grapheme breaking: FCSDK sets a cookie on every answer.
    private static func pair(in header: String) -> (name: String, value: String)? {
        let bytes = header.utf8
        guard bytes.allSatisfy({ $0 < 0x80 }) else {
            let pair = header.prefix { $0 != ";" }
            guard let equals = pair.firstIndex(of: "=") else { return nil }
            let name = String(pair[..<equals].trimmingSpaces)
            guard !name.isEmpty else { return nil }
            return (name, String(pair[pair.index(after: equals)...].trimmingSpaces))
        }
        let end = bytes.firstIndex(of: UInt8(ascii: ";")) ?? bytes.endIndex
        guard let equals = bytes[..<end].firstIndex(of: UInt8(ascii: "=")) else { return nil }
        let name = asciiTrimmed(header[..<equals])
        guard !name.isEmpty else { return nil }
        return (name, asciiTrimmed(header[bytes.index(after: equals)..<end]))
    }

    /// `text` of ASCII without the whitespace at either end (what `Character.isWhitespace` says of ASCII).
    private static func asciiTrimmed(_ text: Substring) -> String {
        let bytes = text.utf8
        let isSpace = { (byte: UInt8) in byte == 0x20 || (0x09...0x0D).contains(byte) }
        let start = bytes.firstIndex { !isSpace($0) } ?? bytes.endIndex
        let end = bytes[start...].lastIndex { !isSpace($0) }.map { bytes.index(after: $0) } ?? start
        return String(text[start..<end])
    }

    /// The `Cookie` header value, or nil when the jar is empty.
    public var header: String? {
        guard let first = cookies.first else { return nil }
        // Written into one string sized up front: an interpolated string per cookie and an array to join them cost every
        // request of a flow that keeps cookies three allocations.
        var header = ""
        header.reserveCapacity(cookies.reduce(-2) { $0 + 3 + $1.name.utf8.count + $1.value.utf8.count })
        header += first.name
        header += "="
        header += first.value
        for cookie in cookies.dropFirst() {
            header += "; "
            header += cookie.name
            header += "="
            header += cookie.value
        }
        return header
    }

    public mutating func removeAll() { cookies.removeAll() }

    public static func == (a: CookieJar, b: CookieJar) -> Bool {
        a.cookies.elementsEqual(b.cookies) { $0 == $1 }
    }
}
