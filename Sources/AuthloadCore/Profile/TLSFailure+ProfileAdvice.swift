/// The transport reports what failed in a TLS connection and names no profile key (it serves `authload serve`
/// and tests as well as profiles); the words that say which key fixes it live here, beside the profile.
extension TLSFailure {
    /// What to set in the profile about it, in a few words that name the key.
    public var profileAdvice: String {
        switch cause {
        case .untrustedIssuer, .verificationFailed:
            "set target.tls.caFile to the PEM of the CA that issued it, or target.insecureSkipTLSVerify to accept any"
        case .expired: "the server must renew it; target.insecureSkipTLSVerify accepts it as it is"
        case .nameMismatch: "set target.tls.serverName to a name the certificate lists"
        case .clientCertificateRequired: "set target.tls.clientCertificate and target.tls.clientKey"
        case .clientCertificateRefused: "set target.tls.clientCertificate to one a CA the server trusts issued"
        }
    }
}
