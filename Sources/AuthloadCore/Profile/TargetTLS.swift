/// How a run's connections to an https target check the server and present themselves (`target.tls`).
///
/// Paths only: Core does no I/O. The command line reads the files once, before the run starts, so a
/// missing or malformed one is a profile error and not a failure of every connection.
public struct TargetTLS: Sendable, Equatable {
    /// Accept any certificate from the target (`target.insecureSkipTLSVerify`), e.g. a staging server's
    /// self-signed one. Off by default; a run with it on says so in its output and report.
    public var insecureSkipTLSVerify = false
    /// A PEM bundle of CA certificates trusted instead of the system's (`target.tls.caFile`).
    public var caFile: String?
    /// Trusts the system's CAs beside ``caFile`` (`target.tls.addSystemRoots`); only with ``caFile``.
    public var addSystemRoots: Bool
    /// The name sent as SNI and checked against the certificate, for a `baseURL` that is an address or a
    /// name the certificate does not list (`target.tls.serverName`).
    public var serverName: String?
    /// A PEM certificate (and any intermediates after it) the client presents (`target.tls.clientCertificate`).
    public var clientCertificate: String?
    /// The unencrypted PEM private key of ``clientCertificate`` (`target.tls.clientKey`).
    public var clientKey: String?
    /// Whether a new connection resumes a TLS session an earlier one to the same server got (`target.tls.resumeSessions`).
    /// Sessions are shared by every user of the run, so with it on a new user's first connection may skip the full
    /// handshake a first-time device makes; off, every connection makes a full one. On by default.
    public var resumeSessions = true

    public init(
        caFile: String? = nil, addSystemRoots: Bool = false, serverName: String? = nil, clientCertificate: String? = nil,
        clientKey: String? = nil
    ) {
        self.caFile = caFile
        self.addSystemRoots = addSystemRoots
        self.serverName = serverName
        self.clientCertificate = clientCertificate
        self.clientKey = clientKey
    }

    /// Reads `target.tls`; `insecure` is `target.insecureSkipTLSVerify`, which checks no certificate, so a CA
    /// to check against beside it would be a contradiction the profile must resolve.
    static func read(_ reader: ProfileReader, target: TargetPlan, insecure: ProfileReader?) throws(ProfileError) -> TargetTLS {
        let keys: Set = ["caFile", "addSystemRoots", "serverName", "clientCertificate", "clientKey", "resumeSessions"]
        try reader.rejectUnknownKeys(allowed: keys)
        let resumeSessions = try reader.optional("resumeSessions")?.bool() ?? true
        switch target {
        case .embedded:
            // The embedded server may speak TLS (staging.tls): whether to resume sessions means something there too.
            let given = try reader.object().keys
            guard !given.isEmpty, given.allSatisfy({ $0 == "resumeSessions" }) else {
                throw reader.error("is for a baseURL target; the embedded server makes a new certificate for each run")
            }
            var tls = TargetTLS()
            tls.resumeSessions = resumeSessions
            return tls
        case .url(let url) where !url.endpoint.tls:
            throw reader.error("the baseURL is http://; TLS settings need an https:// baseURL")
        case .url: break
        }
        func file(_ key: String) throws(ProfileError) -> String? {
            guard let field = try reader.optional(key) else { return nil }
            let path = try field.string()
            guard !path.isEmpty else { throw field.error("must be the path of a PEM file") }
            return path
        }
        var tls = TargetTLS(caFile: try file("caFile"), clientCertificate: try file("clientCertificate"), clientKey: try file("clientKey"))
        tls.resumeSessions = resumeSessions
        if let roots = try reader.optional("addSystemRoots") {
            tls.addSystemRoots = try roots.bool()
            guard tls.caFile != nil || !tls.addSystemRoots else {
                throw roots.error("means something only beside caFile (without caFile the system's CAs are trusted anyway)")
            }
        }
        if let name = try reader.optional("serverName") {
            let text = try name.string()
            guard !text.isEmpty, text.allSatisfy({ $0.isLetter || $0.isNumber || "-.*".contains($0) }),
                text.unicodeScalars.allSatisfy(\.isASCII)
            else {
                throw name.error("must be a DNS name such as \"staging.example.com\"")
            }
            tls.serverName = text
        }
        switch (tls.clientCertificate, tls.clientKey) {
        case (.some, nil): throw reader.error("clientCertificate needs clientKey (the PEM private key of that certificate)")
        case (nil, .some): throw reader.error("clientKey needs clientCertificate (the PEM certificate of that key)")
        default: break
        }
        if let insecure, tls.caFile != nil, try insecure.bool() {
            throw insecure.error("accepts any certificate, so target.tls.caFile would never be used: give one or the other")
        }
        return tls
    }
}
