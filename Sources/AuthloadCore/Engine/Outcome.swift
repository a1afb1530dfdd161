/// How one step or flow ended: a kind, and a detail that tells errors of one kind apart.
public struct Outcome: Sendable, Hashable, CustomStringConvertible {
    public var kind: OutcomeKind
    /// An HTTP status, an error key, a socket error; empty for `.ok`.
    public var detail: String
    /// Whether the request never reached a server that answers (``TransportError/isConnectionFailure``): a user
    /// backs off after one (``ConnectionBackoff``), and only these make a target unreachable (``Reachability``).
    /// Kept from the transport's typed reason, since the detail is words for people, not something to decide on.
    public private(set) var isConnectionFailure = false

    public init(_ kind: OutcomeKind, _ detail: String = "") {
        self.kind = kind
        self.detail = detail
    }

    public static let ok = Outcome(.ok)
    public static let cancelled = Outcome(.cancelled)

    public var isOK: Bool { kind == .ok }

    public var description: String { detail.isEmpty ? kind.rawValue : "\(kind.rawValue) (\(detail))" }

    // An outcome is what the error breakdown keys on: its kind and detail. Whether it was a connection failure follows
    // from the same typed reason as the detail, and a result read back from JSON no longer knows it.
    public static func == (a: Outcome, b: Outcome) -> Bool { a.kind == b.kind && a.detail == b.detail }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(kind)
        hasher.combine(detail)
    }

    /// The outcome of a request that got no response.
    public init(_ error: any Error) {
        switch error {
        case let error as TransportError:
            self.init(transport: error)
            isConnectionFailure = error.isConnectionFailure
        case is CancellationError: self = .cancelled
        default: self.init(.transportError, "\(error)")
        }
    }

    /// Decided on the error's typed reason; only stable texts go into the detail, since free text would split the
    /// error breakdown.
    private init(transport error: TransportError) {
        switch (error.kind, error.reason) {
        case (.timeout, .timedOut(.readingResponse)): self.init(.timeout, "response incomplete within the step timeout")
        case (.timeout, _): self.init(.timeout, "no response within the step timeout")
        case (.protocolViolation, .badResponse(let problem)): self.init(.transportError, "bad response: \(problem)")
        // An HTTP/2 stream or connection error: the detail names the RFC 9113 code (`h2 stream error PROTOCOL_ERROR`).
        case (.protocolViolation, .http2): self.init(.transportError, error.detail)
        case (.protocolViolation, _): self.init(.transportError, "bad response")
        case (.cancelled, _): self = .cancelled
        // The kind alone ("tls") would not say which check failed or how to fix it; the few TLS details are stable texts.
        // A certificate problem also says which profile key fixes it: the transport names none.
        case (.tls, _):
            if let failure = error.tlsFailure {
                self.init(.transportError, "\(error.description) (\(failure.profileAdvice))")
            } else if let advice = error.reason.profileAdvice {
                self.init(.transportError, "\(error.description): \(advice)")
            } else {
                self.init(.transportError, error.description)
            }
        // A socket error says which call failed, with which errno, and what to change (stable texts). The transport
        // says what failed; what to change comes from here, the layer that knows the profile.
        case (.other, _) where !error.detail.isEmpty, (.generatorLimit, _):
            self.init(.transportError, error.reason.profileAdvice.map { "\(error.description): \($0)" } ?? error.description)
        default: self.init(.transportError, error.kind.rawValue)
        }
    }
}
