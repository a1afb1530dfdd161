/// A service that breaks whole connections on purpose: a TLS handshake that fails.
public protocol ConnectionFaultInjecting: Sendable {
    /// Asked once per accepted connection; ``WireFault/tlsHandshake`` makes the handshake fail.
    func connectionFault() -> WireFault?
}

/// A way the staging server breaks an HTTP exchange on purpose, to prove that the load tool classifies
/// each under its own error kind, never hangs past its timeouts and never crashes (fault injection).
///
/// The server applies a fault on the wire; an in-process transport reports the error the client would.
public enum WireFault: String, Sendable, Hashable, CaseIterable {
    /// The connection is reset (RST) instead of answered.
    case reset
    /// The headers and part of a chunked body, then the connection closes.
    case closeMidBody
    /// A status line that is not HTTP.
    case malformedStatus
    /// A header line without a colon.
    case malformedHeader
    /// A header section larger than a client accepts.
    case oversizedHeaders
    /// Fewer body bytes than `Content-Length` promises, then the connection closes.
    case shortBody
    /// More body bytes than `Content-Length` says.
    case longBody
    /// No answer at all: the connection stays open and silent.
    case noResponse
    /// The response arrives one byte a second.
    case trickle
    /// The TLS handshake fails (the server sends an alert and closes); HTTPS only.
    case tlsHandshake

    /// The error a client meets: what the socket transport reports, and what an in-process one throws.
    public var clientError: TransportError {
        switch self {
        case .reset: TransportError(.connectionReset)
        case .closeMidBody: .badResponse(.cutShort)
        case .malformedStatus: .badResponse(.malformedStatusLine)
        case .malformedHeader: .badResponse(.malformedHeader)
        case .oversizedHeaders: .badResponse(.headersTooLarge)
        case .shortBody: .badResponse(.bodyShorterThanContentLength)
        case .longBody: .badResponse(.bodyLongerThanContentLength)
        case .noResponse: TransportError(.timeout)
        case .trickle: TransportError(.timedOut(.readingResponse), TransportError.incompleteDetail)
        case .tlsHandshake: TransportError(.tls, "the server closed the connection during the TLS handshake")
        }
    }

    /// Whether the client only learns of it when its timeout runs out.
    public var endsInTimeout: Bool { self == .noResponse || self == .trickle }

    /// How a step that met this fault is counted.
    public var expectedOutcome: Outcome { Outcome(clientError) }
}
