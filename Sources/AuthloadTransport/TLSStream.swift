import AuthloadCore
import COpenSSL
import CSystem
import Foundation

/// A TLS session over a non-blocking socket, for the client and the server side alike.
///
/// OpenSSL reads and writes the socket itself (`SSL_set_fd`) and says which readiness it waits for:
/// a read may need the socket writable and a write readable, so the interest comes from OpenSSL,
/// never from the call. Every call first clears the loop thread's error queue, since one thread
/// serves many sessions and a stale entry would blame the wrong one.
///
/// ```swift
/// let stream = try context.makeStream(fd: fd, host: "auth.example.com")
/// switch stream.handshake() { case .done: ...; case .wouldBlock(let interest): ...; ... }
/// ```
final class TLSStream: ByteStream {
    let fd: Int32
    /// Nil once ``shutdown()`` freed it.
    private var ssl: OpaquePointer?
    /// The host a verifying client checks the certificate against; nil on servers and when
    /// verification is off, where a failed handshake is never a verification failure.
    private let verifiedPeer: String?
    private var established = false
    /// A fatal error happened: OpenSSL forbids `SSL_shutdown` after one.
    private var broken = false

    /// Takes ownership of `ssl`, already bound to `fd` and set to connect or accept.
    init(fd: Int32, ssl: OpaquePointer, verifiedPeer: String?) {
        self.fd = fd
        self.ssl = ssl
        self.verifiedPeer = verifiedPeer
    }

    deinit {
        if let ssl { SSL_free(ssl) }
    }

    var isSecure: Bool { true }

    func handshake() -> StreamResult {
        guard let ssl else { return .failed(TransportError(.closed)) }
        OpenSSLError.clear()
        let status = SSL_do_handshake(ssl)
        if status == 1 {
            established = true
            return .done(0)
        }
        return outcome(of: status, on: ssl, during: "TLS handshake")
    }

    /// Decrypted bytes OpenSSL holds (`SSL_pending`), or record bytes it read but has not decrypted yet.
    var hasBufferedInput: Bool {
        guard let ssl else { return false }
        return SSL_pending(ssl) > 0 || SSL_has_pending(ssl) == 1
    }

    func read(into buffer: UnsafeMutableRawBufferPointer) -> StreamResult {
        guard let ssl else { return .end }
        OpenSSLError.clear()
        let count = SSL_read(ssl, buffer.baseAddress, Int32(clamping: buffer.count))
        if count > 0 { return .done(Int(count)) }
        return outcome(of: count, on: ssl, during: "TLS read")
    }

    /// Writes at least one record's worth, or none (partial writes are on). After `.wouldBlock`, the
    /// caller must offer the same bytes again, from any address (moving buffers are accepted).
    func write(_ bytes: UnsafeRawBufferPointer) -> StreamResult {
        guard let ssl else { return .failed(TransportError(.closed)) }
        guard !bytes.isEmpty else { return .done(0) }
        OpenSSLError.clear()
        let count = SSL_write(ssl, bytes.baseAddress, Int32(clamping: bytes.count))
        if count > 0 { return .done(Int(count)) }
        return outcome(of: count, on: ssl, during: "TLS write")
    }

    /// Sends close_notify once, without waiting for the peer's, and frees the session.
    func shutdown() {
        guard let ssl else { return }
        if established && !broken {
            OpenSSLError.clear()
            _ = SSL_shutdown(ssl)
            OpenSSLError.clear()
        }
        SSL_free(ssl)
        self.ssl = nil
    }

    private func outcome(of status: Int32, on ssl: OpaquePointer, during operation: String) -> StreamResult {
        let systemError = errno
        switch SSL_get_error(ssl, status) {
        case SSL_ERROR_WANT_READ:
            return .wouldBlock(interest: EPOLLIN.rawValue)
        case SSL_ERROR_WANT_WRITE:
            return .wouldBlock(interest: EPOLLOUT.rawValue)
        case SSL_ERROR_ZERO_RETURN:
            return .end
        case SSL_ERROR_SYSCALL:
            broken = true
            let reasons = OpenSSLError.drain()
            if !reasons.isEmpty { return .failed(TransportError(.tls, "\(operation) failed: \(reasons.joined(separator: "; "))")) }
            // An end of file where OpenSSL wanted bytes (ignored unexpected EOF lands here on older versions).
            if systemError == 0 { return .end }
            return .failed(SocketError.transportError(systemError, during: operation))
        default:
            broken = true
            if !established, let failure = verificationFailure(ssl) { return .failed(failure) }
            return .failed(OpenSSLError.error("\(operation) failed"))
        }
    }

    /// The certificate check that made a client handshake fail, in words that say what to do.
    private func verificationFailure(_ ssl: OpaquePointer) -> TransportError? {
        guard let peer = verifiedPeer else { return nil }
        let result = SSL_get_verify_result(ssl)
        guard result != Int(X509_V_OK) else { return nil }
        _ = OpenSSLError.drain()
        let reason = String(cString: X509_verify_cert_error_string(result))
        switch Int32(truncatingIfNeeded: result) {
        case X509_V_ERR_HOSTNAME_MISMATCH, X509_V_ERR_IP_ADDRESS_MISMATCH:
            return TransportError(
                .tls,
                "certificate verify failed: \(reason): the certificate is not for \(peer) "
                    + "(connect by a name the certificate lists, or set target.insecureSkipTLSVerify to accept it)")
        default:
            return TransportError(.tls, "certificate verify failed: \(reason) (set target.insecureSkipTLSVerify to accept it)")
        }
    }
}
