import AuthloadCore
import COpenSSL
import CSystem
import Foundation

/// A TLS session over a non-blocking socket, for the client and the server side alike.
///
/// OpenSSL reads and writes the socket itself (`SSL_set_fd`) and says which readiness it waits for:
/// a read may need the socket writable and a write readable, so the interest comes from OpenSSL,
/// never from the call. One loop thread serves many sessions, so its error queue must be empty before each call:
/// a stale entry would blame the wrong session, and turn a mere "wants more bytes" into a fatal error. A handshake
/// clears the queue before and after; every failed call drains what it queued. So the queue is empty whenever a
/// session reads or writes, and those, once a request per call, skip the clearing (checked in debug builds).
///
/// ```swift
/// let stream = try context.makeStream(fd: fd, host: "auth.example.com")
/// switch stream.handshake() { case .done: ...; case .wouldBlock(let interest): ...; ... }
/// ```
final class TLSStream: ByteStream {
    let fd: Int32
    /// Nil once ``shutdown()`` freed it.
    private var ssl: OpaquePointer?
    /// Which side of the connection this is, and for a client, what it checks the certificate against.
    enum Role {
        case server
        /// `verifiedPeer` is nil when verification is off: a failed handshake is then never a verification
        /// failure. `name` is the server's name (or address) as sent and checked.
        case client(verifiedPeer: String?, name: String)
    }

    private let role: Role
    /// Where a client keeps the session its server gave it, at its close, for the next connection to that server.
    private let resumption: (sessions: TLSSessionCache, key: String)?
    /// A client that sends a certificate when asked: an alert about certificates from the server is then its
    /// verdict on that certificate, and without one, the server's demand for it.
    private let sendsCertificate: Bool
    private var established = false
    /// A fatal error happened: OpenSSL forbids `SSL_shutdown` after one.
    private var broken = false

    /// Takes ownership of `ssl`, already bound to `fd` and set to connect or accept.
    init(
        fd: Int32, ssl: OpaquePointer, role: Role, sendsCertificate: Bool = false,
        resumption: (sessions: TLSSessionCache, key: String)? = nil
    ) {
        self.fd = fd
        self.ssl = ssl
        self.role = role
        self.sendsCertificate = sendsCertificate
        self.resumption = resumption
    }

    deinit {
        if let ssl { SSL_free(ssl) }
    }

    var isSecure: Bool { true }

    /// The handshake resumed an earlier session instead of checking the server's certificate again.
    var isResumed: Bool { ssl.map { SSL_session_reused($0) == 1 } ?? false }

    func handshake() -> StreamResult {
        guard let ssl else { return .failed(TransportError(.closed)) }
        OpenSSLError.clear()
        let status = SSL_do_handshake(ssl)
        if status == 1 {
            established = true
            // A handshake that succeeds may still leave entries behind (a certificate check's tries, say).
            OpenSSLError.clear()
            return .done(0)
        }
        return outcome(of: status, on: ssl, during: "TLS handshake")
    }

    /// The protocol the server chose by ALPN (`h2`, `http/1.1`), once the handshake is done; nil when it chose none.
    var negotiatedProtocol: String? {
        guard let ssl, established else { return nil }
        var name: UnsafePointer<UInt8>?
        var length: UInt32 = 0
        SSL_get0_alpn_selected(ssl, &name, &length)
        guard let name, length > 0 else { return nil }
        return String(decoding: UnsafeBufferPointer(start: name, count: Int(length)), as: UTF8.self)
    }

    /// Decrypted bytes OpenSSL holds (`SSL_pending`), or record bytes it read but has not decrypted yet: a client reads
    /// ahead (one `recv` takes every record that has arrived), and only this, not epoll, tells that more is there.
    var hasBufferedInput: Bool {
        guard let ssl else { return false }
        return SSL_pending(ssl) > 0 || SSL_has_pending(ssl) == 1
    }

    func read(into buffer: UnsafeMutableRawBufferPointer) -> StreamResult {
        guard let ssl else { return .end }
        OpenSSLError.assertEmpty()
        let count = SSL_read(ssl, buffer.baseAddress, Int32(clamping: buffer.count))
        if count > 0 { return .done(Int(count)) }
        return outcome(of: count, on: ssl, during: "TLS read")
    }

    /// Writes at least one record's worth, or none (partial writes are on). After `.wouldBlock`, the
    /// caller must offer the same bytes again, from any address (moving buffers are accepted).
    func write(_ bytes: UnsafeRawBufferPointer) -> StreamResult {
        guard let ssl else { return .failed(TransportError(.closed)) }
        guard !bytes.isEmpty else { return .done(0) }
        OpenSSLError.assertEmpty()
        let count = SSL_write(ssl, bytes.baseAddress, Int32(clamping: bytes.count))
        if count > 0 { return .done(Int(count)) }
        return outcome(of: count, on: ssl, during: "TLS write")
    }

    /// Keeps the session for the next connection to the same server (a client's), sends close_notify once without
    /// waiting for the peer's, and frees the connection's state.
    func shutdown() {
        guard let ssl else { return }
        if established && !broken {
            // With TLS 1.3 the server's tickets come after the handshake, so the session is taken at the close:
            // by then the connection has read them.
            if let resumption, let session = SSL_get1_session(ssl) { resumption.sessions.keep(session, for: resumption.key) }
            OpenSSLError.clear()
            _ = SSL_shutdown(ssl)
            OpenSSLError.clear()
        }
        SSL_free(ssl)
        self.ssl = nil
    }

    private func outcome(of status: Int32, on ssl: OpaquePointer, during operation: String) -> StreamResult {
        let systemError = lastErrno()
        switch SSL_get_error(ssl, status) {
        case SSL_ERROR_WANT_READ:
            return .wouldBlock(interest: EPOLLIN.rawValue)
        case SSL_ERROR_WANT_WRITE:
            return .wouldBlock(interest: EPOLLOUT.rawValue)
        case SSL_ERROR_ZERO_RETURN:
            return .end
        case SSL_ERROR_SYSCALL:
            broken = true
            let reasons = OpenSSLError.drainReasons()
            if let failure = clientCertificateFailure(reasons) { return .failed(TransportError(failure)) }
            if !reasons.isEmpty { return .failed(TransportError(.tls, "\(operation) failed: \(Self.texts(reasons))")) }
            if systemError == ECONNRESET || systemError == EPIPE, let failure = alertBeforeReset(ssl) {
                return .failed(TransportError(failure))
            }
            // An end of file where OpenSSL wanted bytes (ignored unexpected EOF lands here on older versions).
            if systemError == 0 { return .end }
            return .failed(TransportError.socket(IOError(systemError, call: operation), .transferring))
        default:
            broken = true
            if !established, let failure = verificationFailure(ssl) { return .failed(TransportError(failure)) }
            let reasons = OpenSSLError.drainReasons()
            // With TLS 1.3 the client's handshake is over before the server has looked at its certificate: the
            // server's verdict comes as an alert on the first read.
            if let failure = clientCertificateFailure(reasons) { return .failed(TransportError(failure)) }
            return .failed(
                TransportError(.tls, "\(operation) failed: \(reasons.isEmpty ? "no detail from OpenSSL" : Self.texts(reasons))")
            )
        }
    }

    /// The certificate check that made a client handshake fail, by cause; the transport names no profile
    /// key; the caller that knows where the settings came from says what to change.
    private func verificationFailure(_ ssl: OpaquePointer) -> TLSFailure? {
        guard case .client(let peer?, _) = role else { return nil }
        let result = SSL_get_verify_result(ssl)
        guard result != Int(X509_V_OK) else { return nil }
        _ = OpenSSLError.drain()
        let reason = String(cString: X509_verify_cert_error_string(result))
        let cause: TLSFailure.Cause
        switch Int32(truncatingIfNeeded: result) {
        case X509_V_ERR_HOSTNAME_MISMATCH, X509_V_ERR_IP_ADDRESS_MISMATCH:
            cause = .nameMismatch
        case X509_V_ERR_CERT_HAS_EXPIRED, X509_V_ERR_CERT_NOT_YET_VALID:
            cause = .expired
        case X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT, X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN, X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT,
            X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY, X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE, X509_V_ERR_CERT_UNTRUSTED:
            cause = .untrustedIssuer
        default:
            cause = .verificationFailed
        }
        return TLSFailure(cause, reason: reason, peer: peer)
    }

    /// The alert a server sent before it reset the connection, when a client's write met the reset first: a
    /// TLS 1.3 server that refuses the client's certificate alerts and closes while the client, its handshake
    /// done, is already sending its request. The alert is still in the socket's receive queue; one read finds it.
    private func alertBeforeReset(_ ssl: OpaquePointer) -> TLSFailure? {
        guard case .client = role else { return nil }
        var byte: UInt8 = 0
        OpenSSLError.clear()
        guard SSL_read(ssl, &byte, 1) <= 0 else { return nil }
        return clientCertificateFailure(OpenSSLError.drainReasons())
    }

    /// OpenSSL's reasons as one text, without repeats.
    private static func texts(_ reasons: [OpenSSLError.Reason]) -> String {
        var texts: [String] = []
        for reason in reasons where !texts.contains(reason.text) { texts.append(reason.text) }
        return texts.joined(separator: "; ")
    }

    /// The alerts by which a server refuses the certificate a client sent (or, from a TLS 1.2 server, its lack of one).
    private static let refusals: [Int32] = [
        SSL_R_TLSV1_ALERT_UNKNOWN_CA, SSL_R_SSLV3_ALERT_BAD_CERTIFICATE, SSL_R_SSLV3_ALERT_CERTIFICATE_UNKNOWN,
        SSL_R_SSLV3_ALERT_CERTIFICATE_EXPIRED, SSL_R_SSLV3_ALERT_CERTIFICATE_REVOKED, SSL_R_SSLV3_ALERT_UNSUPPORTED_CERTIFICATE,
        SSL_R_TLSV1_ALERT_ACCESS_DENIED
    ]

    /// The server's alert about the client's certificate, by OpenSSL's reason code (`tlsv13 alert certificate
    /// required`, `tlsv1 alert unknown ca`, …): it demanded one the client lacks, or refused the one it sent.
    private func clientCertificateFailure(_ reasons: [OpenSSLError.Reason]) -> TLSFailure? {
        guard case .client(_, let name) = role else { return nil }
        if let reason = reasons.first(where: { $0.isSSL(SSL_R_TLSV13_ALERT_CERTIFICATE_REQUIRED) }) {
            return TLSFailure(.clientCertificateRequired, reason: reason.text, peer: name)
        }
        guard let reason = reasons.first(where: { reason in Self.refusals.contains { reason.isSSL($0) } }) else { return nil }
        // Without a certificate of its own the client was refused for wanting none (a TLS 1.2 server, say).
        return TLSFailure(sendsCertificate ? .clientCertificateRefused : .clientCertificateRequired, reason: reason.text, peer: name)
    }
}
