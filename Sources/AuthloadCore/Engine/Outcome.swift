/// How one step or flow ended: a kind, and a detail that tells errors of one kind apart.
public struct Outcome: Sendable, Hashable, CustomStringConvertible {
    public var kind: OutcomeKind
    /// An HTTP status, an error key, a socket error; empty for `.ok`.
    public var detail: String

    public init(_ kind: OutcomeKind, _ detail: String = "") {
        self.kind = kind
        self.detail = detail
    }

    public static let ok = Outcome(.ok)
    public static let cancelled = Outcome(.cancelled)

    public var isOK: Bool { kind == .ok }

    public var description: String { detail.isEmpty ? kind.rawValue : "\(kind.rawValue) (\(detail))" }

    /// The outcome of a request that got no response.
    public init(_ error: any Error) {
        switch error {
        case let error as TransportError:
            switch error.kind {
            case .timeout:
                self.init(
                    .timeout,
                    error.detail == TransportError.incompleteDetail
                        ? "response incomplete within the step timeout" : "no response within the step timeout")
            case .protocolViolation:
                // Only the stable problem names go into the detail; free text would split the breakdown.
                let problem = TransportError.ResponseProblem(rawValue: error.detail)
                self.init(.transportError, problem.map { "bad response: \($0.rawValue)" } ?? "bad response")
            case .cancelled: self = .cancelled
            // The kind alone ("tls") would not say which check failed or how to fix it; the few TLS details are stable texts.
            // A certificate problem also says which profile key fixes it: the transport names none.
            case .tls:
                self.init(.transportError, error.tlsFailure.map { "\(error.description) (\($0.profileAdvice))" } ?? error.description)
            // A socket error says which call failed, with which errno, and what to change (stable texts).
            case .other where !error.detail.isEmpty, .generatorLimit: self.init(.transportError, error.description)
            default: self.init(.transportError, error.kind.rawValue)
            }
        case is CancellationError: self = .cancelled
        default: self.init(.transportError, "\(error)")
        }
    }
}
