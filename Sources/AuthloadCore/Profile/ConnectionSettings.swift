/// How a run connects to its target: the profile's `connections` object, `timeouts.connect` and the target's TLS
/// trust, parsed once and taken whole by the ``Runner`` and the socket transport, so no layer derives the policy
/// again from parts. Its defaults live here and nowhere else.
///
/// ```swift
/// var settings = ConnectionSettings()                   // per-user, 30 s idle, a connection per flow iteration
/// settings.policy = .shared(poolSize: 64)               // one pool for every user
/// settings.tls.insecureSkipTLSVerify = true             // what `target.insecureSkipTLSVerify` sets
/// ```
public struct ConnectionSettings: Sendable, Equatable {
    /// Who owns a connection, with what that owner needs to know about it.
    public enum Policy: Sendable, Equatable {
        /// Each user its own connections, closed after `idleTimeout` idle and kept for `lifetime` (a device's behaviour).
        case perUser(idleTimeout: Duration, lifetime: ConnectionLifetime)
        /// One pool of `poolSize` keep-alive connections per endpoint, which every user borrows from.
        case shared(poolSize: Int)
    }

    /// How long a kept-alive connection may sit idle before it is closed, unless the profile says otherwise.
    public static let defaultIdleTimeout = Duration.seconds(30)
    public static let defaultPoolSize = 64
    public static let defaultConnectTimeout = Duration.seconds(5)
    public static let defaultPolicy = Policy.perUser(idleTimeout: defaultIdleTimeout, lifetime: .iteration)

    public var policy: Policy
    /// Longest a TCP connect, with its TLS handshake for https, may take (`timeouts.connect`).
    public var connectTimeout: Duration
    /// Local addresses connections are made from, in turn (`connections.sourceAddresses`); empty: the system's choice.
    public var sourceAddresses: [String]
    /// How an https target is checked and what the client shows it (`target.tls`, `target.insecureSkipTLSVerify`).
    public var tls: TargetTLS
    /// Which HTTP version requests travel on (`target.http`).
    public var http: HTTPVersionChoice

    public init(
        policy: Policy = defaultPolicy, connectTimeout: Duration = defaultConnectTimeout, sourceAddresses: [String] = [],
        tls: TargetTLS = TargetTLS(), http: HTTPVersionChoice = .auto
    ) {
        self.policy = policy
        self.connectTimeout = connectTimeout
        self.sourceAddresses = sourceAddresses
        self.tls = tls
        self.http = http
    }

    /// How long an idle connection is kept: the per-user setting, or the default for a pool's.
    public var idleTimeout: Duration {
        switch policy {
        case .perUser(let idleTimeout, _): idleTimeout
        case .shared: Self.defaultIdleTimeout
        }
    }

    /// The pool's size when users share connections; nil when each user has its own.
    public var poolSize: Int? {
        if case .shared(let size) = policy { size } else { nil }
    }

    /// How long a user keeps its own connections; nil when users share a pool.
    public var lifetime: ConnectionLifetime? {
        if case .perUser(_, let lifetime) = policy { lifetime } else { nil }
    }
}

/// How long a user keeps its connections (`connections.lifetime`).
public enum ConnectionLifetime: String, Sendable, Equatable, CaseIterable {
    /// A new connection for every flow iteration, closed after it: a new app session per login. The default, because
    /// an authentication flow is the start of a session, and a server's connection handling is part of what it costs.
    case iteration
    /// One connection for the user's whole life, kept alive across iterations up to `idleTimeout` (what k6 and
    /// browsers do): for flows that model an app already running.
    case user
}

/// Which HTTP version a run's requests travel on (`target.http`). WebSockets always open on HTTP/1.1.
public enum HTTPVersionChoice: String, Sendable, Equatable, CaseIterable {
    /// HTTP/2 where the server agrees to it by ALPN (https), HTTP/1.1 otherwise: what an app's URL loading does.
    case auto
    /// HTTP/1.1 only; TLS offers no `h2`.
    case http1 = "1.1"
    /// HTTP/2 only: by ALPN on https, where a server that does not agree fails the request; with prior knowledge
    /// (h2c, RFC 9113 §3.3) on http.
    case http2 = "2"
}
