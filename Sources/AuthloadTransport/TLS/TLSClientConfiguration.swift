import AuthloadCore
import COpenSSL

/// How a client checks the servers it speaks TLS to, and what it shows them.
public struct TLSClientConfiguration: Sendable, Equatable, CustomStringConvertible {
    /// Accepts any certificate, unchecked (`SSL_VERIFY_NONE`): for staging servers with self-signed
    /// certificates. Off by default.
    public var skipsCertificateVerification: Bool
    /// PEM certificates trusted besides the system store (or instead of it, without ``trustsSystemRoots``),
    /// e.g. a private CA's bundle or a test server's self-signed certificate.
    public var trustedCertificatesPEM: [String]
    /// Whether the system's CAs are trusted. Off, only ``trustedCertificatesPEM`` are: a staging stack's own CA
    /// then cannot be stood in for by a public one.
    public var trustsSystemRoots: Bool
    /// Names to send as SNI and check the certificate against in place of a host's own, keyed by the host as
    /// the URL has it: for a URL with an address, or a name the certificate does not list.
    public var serverNames: [String: String]
    /// A client certificate (PEM, the leaf first, then any intermediates) for servers that ask for one.
    public var clientCertificatePEM: String?
    /// The unencrypted PEM private key of ``clientCertificatePEM``.
    public var clientKeyPEM: String?
    /// Whether a new connection resumes a session an earlier connection to the same server was given (any user's:
    /// ``TLSSessionCache``). Off, every connection makes a full handshake and no session is kept. On by default.
    public var resumeSessions: Bool

    public init(
        skipsCertificateVerification: Bool = false, trustedCertificatesPEM: [String] = [], trustsSystemRoots: Bool = true,
        serverNames: [String: String] = [:], clientCertificatePEM: String? = nil, clientKeyPEM: String? = nil,
        resumeSessions: Bool = true
    ) {
        self.skipsCertificateVerification = skipsCertificateVerification
        self.trustedCertificatesPEM = trustedCertificatesPEM
        self.trustsSystemRoots = trustsSystemRoots
        self.serverNames = serverNames
        self.clientCertificatePEM = clientCertificatePEM
        self.clientKeyPEM = clientKeyPEM
        self.resumeSessions = resumeSessions
    }

    /// The settings without the key: a configuration printed in a log or an error must not carry it.
    public var description: String {
        "TLSClientConfiguration(skipsCertificateVerification: \(skipsCertificateVerification), trusted: \(trustedCertificatesPEM.count), "
            + "systemRoots: \(trustsSystemRoots), serverNames: \(serverNames), clientCertificate: \(clientCertificatePEM != nil), "
            + "resumeSessions: \(resumeSessions))"
    }
}
