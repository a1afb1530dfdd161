/// Where requests go: scheme, host and port of one target.
public struct Endpoint: Sendable, Hashable, CustomStringConvertible {
    public var host: String
    public var port: Int
    public var tls: Bool

    public init(host: String, port: Int, tls: Bool = false) {
        self.host = host
        self.port = port
        self.tls = tls
    }

    /// The value of the `Host` header: the port is left out when it is the scheme's default.
    public var hostHeader: String {
        let bracketed = host.contains(":") ? "[\(host)]" : host
        return (tls && port == 443) || (!tls && port == 80) ? bracketed : "\(bracketed):\(port)"
    }

    public var description: String { "\(tls ? "https" : "http")://\(hostHeader)" }
}

/// Why a request did not produce a response.
public struct TransportError: Error, Sendable, Hashable, CustomStringConvertible {
    public enum Kind: String, Sendable, Hashable, Codable {
        case connectionRefused = "connection refused"
        case connectionReset = "connection reset"
        case connectTimeout = "connect timeout"
        case timeout = "timeout"
        case nameResolution = "name resolution"
        case protocolViolation = "bad response"
        case tls = "tls"
        case closed = "connection closed"
        case cancelled = "cancelled"
        /// The generator ran out of something it needs to open a connection (file descriptors, local ports, socket
        /// memory): the request never left, and the server is not to blame.
        case generatorLimit = "generator limit"
        case other = "socket error"
    }

    public var kind: Kind
    public var detail: String
    /// Why a TLS connection failed, when the transport could tell (a `.tls` error from a certificate check or
    /// the server's verdict on the client's certificate); nil otherwise.
    public var tlsFailure: TLSFailure?

    public init(_ kind: Kind, _ detail: String = "") {
        self.kind = kind
        self.detail = detail
        self.tlsFailure = nil
    }

    public var description: String { detail.isEmpty ? kind.rawValue : "\(kind.rawValue): \(detail)" }

    /// What was wrong with a response, as the stable detail of a `.protocolViolation`, so the error
    /// breakdown groups by cause (never by offsets or counts).
    public enum ResponseProblem: String, Sendable, CaseIterable {
        case malformedStatusLine = "malformed status line"
        case malformedHeader = "malformed header"
        case headersTooLarge = "headers too large"
        case cutShort = "cut short"
        case bodyShorterThanContentLength = "body shorter than Content-Length"
        case bodyLongerThanContentLength = "body longer than Content-Length"
        case unsolicitedBytes = "bytes while no request was pending"
        case malformedBody = "malformed body"
    }

    public static func badResponse(_ problem: ResponseProblem) -> TransportError {
        TransportError(.protocolViolation, problem.rawValue)
    }

    /// The detail of a `.timeout` after some of the response had arrived (it trickled).
    public static let incompleteDetail = "response incomplete"

    /// The detail of a `.connectTimeout` while the TCP connection was still being set up: what usually causes it
    /// under load, and what to change.
    public static let unansweredConnectDetail =
        "the server did not complete the TCP handshake; a server whose accept backlog is full drops new connections: "
        + "raise its listen backlog (nginx `listen ... backlog=N`, net.core.somaxconn) or ramp up more slowly"
}

/// A client's view of one simulated device's HTTP connection(s) to an endpoint.
///
/// A client is owned by one virtual user for one flow iteration; the transport decides whether it
/// holds its own keep-alive connection or borrows from a shared pool.
public protocol HTTPClient: Sendable {
    /// Sends `request` and waits for its response, for at most `timeout`.
    ///
    /// - Parameter isolation: the caller's actor (pass `#isolation`). A transport that can, sends and
    ///   waits in it, so a virtual user's request costs no hop off its actor and back.
    /// - Throws: ``TransportError`` (kind `.timeout` when `timeout` passes first),
    ///   or `CancellationError` when the calling task is cancelled.
    func execute(_ request: HTTPRequest, timeout: Duration, isolation: isolated (any Actor)?) async throws -> HTTPResponse

    /// Opens a WebSocket to this client's endpoint (`ws://`, or `wss://` when the endpoint uses TLS)
    /// on a connection of its own, sending `request` (a `GET` with the target and any extra headers)
    /// as the opening handshake. The handshake, `Sec-WebSocket-Accept` check included, must finish
    /// within `timeout`.
    ///
    /// - Throws: ``WebSocketUpgradeRejected`` when the server answers other than 101;
    ///   ``TransportError`` (`.protocolViolation` for a bad accept key or subprotocol, `.timeout`,
    ///   `.tls`, …); `CancellationError`.
    func openWebSocket(_ request: HTTPRequest, protocols: [String], timeout: Duration) async throws -> any WebSocketConnection

    /// Closes whatever connections this client owns; pending requests fail with `.closed`.
    func shutdown()
}

/// The shared transport that every virtual user sends through.
public protocol Transport: Sendable {
    func makeClient(for endpoint: Endpoint) -> any HTTPClient

    /// Where virtual user number `user` should run (its actor, and its task's nonisolated code), when the
    /// transport would rather carry its requests without a thread hop: an event loop that is also an
    /// executor. Nil leaves the user to Swift's global pool.
    func executor(forUser user: Int) -> (any SerialExecutor & TaskExecutor)?

    /// How many threads of its own carry the users' flows side by side, user number `n` on thread `n % count`
    /// (as ``executor(forUser:)`` places them); nil when users run on Swift's global pool.
    ///
    /// The run's recorder keeps that many shards, picked by user number the same way, so each thread records into
    /// a shard of its own: no lock is contended and the shard stays in that core's cache. More shards than threads
    /// spread one thread's samples over more histograms, each of which then misses the cache at every sample.
    var userThreads: Int? { get }

    /// Whether the thread that would carry user number `user` has had next to no idle time lately: the generator,
    /// not the server, is then the limit, and the open model drops new arrivals for it rather than start users that
    /// would only queue behind the others (see `Runner+Open.swift`). False where the transport cannot tell.
    func isSaturated(forUser user: Int) -> Bool
}

extension HTTPClient {
    /// Sends `request` from no particular isolation; see ``execute(_:timeout:isolation:)``.
    public func execute(_ request: HTTPRequest, timeout: Duration) async throws -> HTTPResponse {
        try await execute(request, timeout: timeout, isolation: nil)
    }
}

extension Transport {
    public func executor(forUser user: Int) -> (any SerialExecutor & TaskExecutor)? { nil }
    public var userThreads: Int? { nil }
    public func isSaturated(forUser user: Int) -> Bool { false }
}
