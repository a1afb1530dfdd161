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
///
/// Three layers, from coarse to fine: the ``kind`` groups the error breakdown (`connection refused`, `bad response`);
/// the ``reason`` is the typed cause callers decide on (retry a stale connection, back off from a target that does not
/// answer, say which setting fixes it); the ``detail`` is for people, short and stable so the breakdown groups by
/// cause. A failed system call also keeps its name and errno (``systemCall``). The transport names no profile key: the
/// layer that reads the profile maps a reason to the key that fixes it (`TransportError+ProfileAdvice.swift`).
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

    /// What a request was doing when its time ran out.
    public enum TimeoutPhase: Sendable, Hashable {
        /// The TCP handshake had not completed.
        case connecting
        /// Connected, but the TLS handshake had not finished.
        case tlsHandshake
        /// The request was sent and no byte of the response came.
        case awaitingResponse
        /// The response had begun and did not finish (it trickled).
        case readingResponse
    }

    /// Why a request failed, typed: what callers match on instead of the detail's words.
    public enum Reason: Sendable, Hashable {
        /// Nothing finer than the ``Kind`` (a simulated transport, a WebSocket that closed, a connection closed by us).
        case unspecified
        /// The target refused the connection (ECONNREFUSED).
        case refused
        /// The connection could not be set up otherwise: no route, a network down, a local rule against it; the
        /// errno in ``TransportError/systemCall`` says which.
        case unreachable
        /// The peer reset the connection (ECONNRESET, EPIPE).
        case reset
        /// The target's host name did not resolve.
        case unresolvedHost
        /// The time ran out in this phase.
        case timedOut(TimeoutPhase)
        /// TLS failed: ``TransportError/tlsFailure`` says which certificate check when one did, and the detail
        /// keeps OpenSSL's reasons.
        case tlsFailed
        /// A kept-alive connection the server had closed failed before any byte came back: the request never reached
        /// the server's logic, and may be sent once more on a new connection.
        case staleConnection
        /// The response broke HTTP/1.1 this way.
        case badResponse(ResponseProblem)
        /// A source address to connect from is not one of this machine's (EADDRNOTAVAIL at bind).
        case sourceAddressNotLocal
        /// No local port was free for another connection to the target (EADDRNOTAVAIL at connect).
        case noFreeLocalPort
        /// The process or the system is out of file descriptors (EMFILE, ENFILE).
        case outOfFileDescriptors
        /// The kernel is out of socket buffers (ENOBUFS, ENOMEM).
        case outOfSocketMemory
        /// A system call failed for a reason none of the above names; ``TransportError/systemCall`` says which.
        case systemCallFailed
        /// HTTP/2 was required, and the server did not agree to it by ALPN in the TLS handshake.
        case http2NotNegotiated
        /// An HTTP/2 stream ended with an RFC 9113 §7 error code: reset by either side (`goAway` false), or the
        /// connection failed or was closed by the server's GOAWAY (`goAway` true). The detail names the code.
        case http2(code: UInt32, goAway: Bool)
        /// An HTTP/2 request was still waiting for a stream when its connection went away (the server's GOAWAY, or a
        /// close): it never left, and may be sent on another connection.
        case http2Unsent

        /// The kind a failure of this reason is grouped under.
        var kind: Kind {
            switch self {
            case .refused: .connectionRefused
            case .reset: .connectionReset
            case .unresolvedHost: .nameResolution
            case .timedOut(.connecting), .timedOut(.tlsHandshake): .connectTimeout
            case .timedOut(.awaitingResponse), .timedOut(.readingResponse): .timeout
            case .tlsFailed: .tls
            case .staleConnection: .closed
            case .badResponse, .http2, .http2Unsent: .protocolViolation
            case .http2NotNegotiated: .tls
            case .noFreeLocalPort, .outOfFileDescriptors, .outOfSocketMemory: .generatorLimit
            case .unspecified, .unreachable, .sourceAddressNotLocal, .systemCallFailed: .other
            }
        }

        /// The reason an error of `kind` has when nothing finer was given.
        init(_ kind: Kind) {
            switch kind {
            case .connectionRefused: self = .refused
            case .connectionReset: self = .reset
            case .nameResolution: self = .unresolvedHost
            case .connectTimeout: self = .timedOut(.connecting)
            case .timeout: self = .timedOut(.awaitingResponse)
            case .tls: self = .tlsFailed
            case .protocolViolation, .closed, .cancelled, .generatorLimit, .other: self = .unspecified
            }
        }
    }

    /// A system call that failed: its name and the errno it left.
    public struct SystemCall: Sendable, Hashable, CustomStringConvertible {
        /// The call, e.g. `connect`, `recv`, `setsockopt(TCP_NODELAY)`.
        public var name: String
        /// The errno it failed with.
        public var code: Int32

        public init(_ name: String, code: Int32) {
            self.name = name
            self.code = code
        }

        public var description: String { "\(name): errno \(code)" }
    }

    public var kind: Kind
    public var reason: Reason
    public var detail: String
    /// Why a TLS connection failed, when the transport could tell (a `.tls` error from a certificate check or
    /// the server's verdict on the client's certificate); nil otherwise.
    public var tlsFailure: TLSFailure?
    /// The system call that failed and its errno, when the error came from one.
    public var systemCall: SystemCall?
    /// How many times the request was sent again, before it failed, because the server had not processed it (as
    /// ``HTTPResponse/resent``): a request that ends in an error still made its server refuse those streams.
    public var resent = 0

    /// An error of `kind` with the reason that kind implies (a refused kind is refused, a timeout awaited a response).
    public init(_ kind: Kind, _ detail: String = "") {
        self.kind = kind
        self.reason = Reason(kind)
        self.detail = detail
        self.tlsFailure = nil
        self.systemCall = nil
    }

    /// An error for `reason`, grouped under the kind it implies.
    public init(_ reason: Reason, _ detail: String = "", systemCall: SystemCall? = nil) {
        self.kind = reason.kind
        self.reason = reason
        self.detail = detail
        self.tlsFailure = nil
        self.systemCall = systemCall
    }

    public var description: String { detail.isEmpty ? kind.rawValue : "\(kind.rawValue): \(detail)" }

    /// What was wrong with a response, short and stable (it is the detail of a `.protocolViolation`, which keys the
    /// error breakdown): never an offset or a count that varies, but the limit a body passed, which is fixed per run.
    public enum ResponseProblem: Sendable, Hashable, CustomStringConvertible {
        case malformedStatusLine
        case malformedHeader
        case headersTooLarge
        case cutShort
        case bodyShorterThanContentLength
        case bodyLongerThanContentLength
        case unsolicitedBytes
        /// The body's framing is unreadable: a bad or conflicting Content-Length, an unknown or invalid
        /// Transfer-Encoding.
        case malformedFraming
        /// A chunk-size line is not hexadecimal or too long.
        case invalidChunkSize
        /// Chunk data not followed by CRLF.
        case malformedChunk
        /// The body passed the largest the client accepts (a server streaming without end, say).
        case bodyTooLarge(limit: Int)

        public var description: String {
            switch self {
            case .malformedStatusLine: "malformed status line"
            case .malformedHeader: "malformed header"
            case .headersTooLarge: "headers too large"
            case .cutShort: "cut short"
            case .bodyShorterThanContentLength: "body shorter than Content-Length"
            case .bodyLongerThanContentLength: "body longer than Content-Length"
            case .unsolicitedBytes: "bytes while no request was pending"
            case .malformedFraming: "malformed body framing"
            case .invalidChunkSize: "invalid chunk size"
            case .malformedChunk: "malformed chunk"
            case .bodyTooLarge(let limit): "body larger than \(limit) bytes"
            }
        }
    }

    public static func badResponse(_ problem: ResponseProblem) -> TransportError {
        TransportError(.badResponse(problem), problem.description)
    }

    /// The detail of a `.timeout` after some of the response had arrived (it trickled).
    public static let incompleteDetail = "response incomplete"

    /// The detail of a `.connectTimeout` while the TCP connection was still being set up: what usually causes it
    /// under load, and what to change.
    public static let unansweredConnectDetail =
        "the server did not complete the TCP handshake; a server whose accept backlog is full drops new connections: "
        + "raise its listen backlog (nginx `listen ... backlog=N`, net.core.somaxconn) or ramp up more slowly"

    /// Whether the server said it did not process the request: an HTTP/2 stream it refused (RST_STREAM REFUSED_STREAM,
    /// or above the last stream of its GOAWAY; RFC 9113 §8.7), or one a connection going away never sent. Such a
    /// request may be sent again, and is in no access log.
    public var isUnprocessedByServer: Bool { wasRefusedByServer || reason == .http2Unsent }

    /// Whether an unprocessed request had its stream opened and refused by the server (``isUnprocessedByServer``, less
    /// the requests that never left): sending it again is a resend.
    public var wasRefusedByServer: Bool { reason == .http2(code: 0x7, goAway: false) }

    /// Whether the request never reached a server that answers: the connection was refused, timed out or could not
    /// be routed, the host name did not resolve, or TLS failed. A user backs off after one (`ConnectionBackoff`),
    /// and only these make a target unreachable (`Reachability`). The generator's own limits (out of ports or
    /// descriptors) are not the target's fault, and a reset or a bad response came from a server that was there.
    public var isConnectionFailure: Bool {
        switch reason {
        case .refused, .unreachable, .unresolvedHost, .timedOut(.connecting), .timedOut(.tlsHandshake), .tlsFailed: true
        default: false
        }
    }
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

    /// Whether users' tasks start isolated to their executor (``executor(forUser:)``) rather than preferring it: the
    /// nonisolated code they call then inherits that isolation (the modules flows run in are built with
    /// `NonisolatedNonsendingByDefault`), and no executor check looks a preference up. Only for a transport whose users
    /// all share one executor that answers ``SerialExecutor/checkIsolated()`` on its thread: a simulation's.
    var isolatesUserTasks: Bool { get }

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

    /// The timers of the thread that carries user number `user`, for a short pause that wakes no other thread (the
    /// open-model generator's between batches of arrivals, run on that thread); nil where the transport has no thread
    /// of its own, and the runner then sleeps on its clock.
    func timer(forUser user: Int) -> (any LoopTimer)?
}

/// A thread's own timers, as a pause for a task running on that thread.
///
/// A task that sleeps on `ContinuousClock` is woken by a timer thread of Swift's, which hands it to a pool thread and on
/// to the task's executor: three threads woken for one pause. A pause on the loop's timers is one entry in its timer
/// queue, and the loop resumes the task between its rounds.
public protocol LoopTimer: Sendable {
    /// Returns once `delay` has passed. Cancellation does not cut it short: callers keep their pauses short.
    ///
    /// - Parameter isolation: the caller's, kept across the pause: a caller isolated to the thread's executor then
    ///   resumes without another hop.
    func pause(for delay: Duration, isolation: isolated (any Actor)?) async
}

extension HTTPClient {
    /// Sends `request` from no particular isolation; see ``execute(_:timeout:isolation:)``.
    public func execute(_ request: HTTPRequest, timeout: Duration) async throws -> HTTPResponse {
        try await execute(request, timeout: timeout, isolation: nil)
    }
}

extension Transport {
    public func executor(forUser user: Int) -> (any SerialExecutor & TaskExecutor)? { nil }
    public var isolatesUserTasks: Bool { false }
    public var userThreads: Int? { nil }
    public func isSaturated(forUser user: Int) -> Bool { false }
    public func timer(forUser user: Int) -> (any LoopTimer)? { nil }
}
