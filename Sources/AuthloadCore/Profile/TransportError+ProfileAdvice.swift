/// The transport says why a connection failed and names no profile key (it serves `authload serve` and tests as well
/// as profiles); the words that say what to change, keys included, live here beside the profile, as
/// `TLSFailure+ProfileAdvice.swift` does for certificates.
extension TransportError.Reason {
    /// What to change about it, when the generator's own settings or limits are to blame; nil when the target is.
    public var profileAdvice: String? {
        switch self {
        case .sourceAddressNotLocal: "connections.sourceAddresses must name local addresses"
        case .noFreeLocalPort:
            "every closed connection holds its port in TIME_WAIT for a minute; keep connections for the user's life "
                + "(connections.lifetime \"user\"), spread them over more source addresses (connections.sourceAddresses), "
                + "or widen net.ipv4.ip_local_port_range"
        case .outOfFileDescriptors:
            "raise `ulimit -n` (authload raises the soft limit to the hard one) or run fewer users per process"
        case .outOfSocketMemory: "fewer connections per process, or more generators (--shard)"
        case .http2NotNegotiated:
            "the server did not accept HTTP/2 (h2) by ALPN; set target.http to \"auto\" to fall back to HTTP/1.1, or \"1.1\""
        default: nil
        }
    }
}
