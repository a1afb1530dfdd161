/// Why a TLS connection to a server failed, as the transport found it: a cause a caller can act on, and
/// OpenSSL's own words for it.
///
/// The transport knows TLS, not profiles: it says *what* failed (the issuer is not trusted, the
/// certificate has expired, it names another host, the server wants a client certificate) and leaves
/// *what to set* to the layer that reads the profile (see ``TLSFailure/profileAdvice``).
public struct TLSFailure: Sendable, Hashable, CustomStringConvertible {
    public enum Cause: String, Sendable, Hashable, CaseIterable {
        /// The chain does not end at a trusted certificate: self-signed, or issued by a CA not trusted.
        case untrustedIssuer
        /// The certificate (or one in its chain) is past its end date or before its start date.
        case expired
        /// The certificate is valid but names neither the host nor the address connected to.
        case nameMismatch
        /// The server asked for a client certificate and the client had none to send.
        case clientCertificateRequired
        /// The client sent a certificate and the server rejected it (unknown CA, expired, bad).
        case clientCertificateRefused
        /// Any other certificate check that failed (a bad signature, an invalid CA, a purpose).
        case verificationFailed
    }

    public var cause: Cause
    /// OpenSSL's text for it, e.g. `unable to get local issuer certificate` or `tlsv13 alert certificate required`.
    public var reason: String
    /// The name or address the certificate was checked against.
    public var peer: String

    public init(_ cause: Cause, reason: String, peer: String) {
        self.cause = cause
        self.reason = reason
        self.peer = peer
    }

    /// What failed, short and stable (it keys the report's error breakdown), without advice.
    public var description: String {
        switch cause {
        case .untrustedIssuer, .expired, .verificationFailed: "certificate verify failed: \(reason)"
        case .nameMismatch: "certificate verify failed: \(reason): the certificate is not for \(peer)"
        case .clientCertificateRequired: "the server requires a client certificate (\(reason))"
        case .clientCertificateRefused: "the server refused the client certificate (\(reason))"
        }
    }
}

extension TransportError {
    /// A `.tls` error carrying `failure`, whose text is the failure's description.
    public init(_ failure: TLSFailure) {
        self.init(.tls, failure.description)
        self.tlsFailure = failure
    }
}
