import AuthloadCore
import COpenSSL

/// Sessions that servers gave a client context to resume, by server name and port, each to be used once.
///
/// A new connection that finds one resumes it: the server skips its certificate and signature, the client the
/// certificate's parsing and check, as browsers, curl and wrk do. The name is the one the certificate was checked
/// against when the session was made, so a resumed connection is as verified as that one was. TLS 1.3 asks that a
/// ticket be used only once (RFC 8446 §C.4): ``take(for:)`` removes what it hands out, and each connection keeps the
/// session its server gave it at its close, so as many sessions circulate as connections are open at once.
final class TLSSessionCache: Sendable {
    /// Sessions kept for one server at most; a connection that finds none makes a full handshake.
    let capacity: Int
    private let sessions = Locked<[String: [Session]]>([:])

    /// An `SSL_SESSION` reference this cache owns. `@unchecked Sendable`: a session is immutable once
    /// resumable (OpenSSL makes a new one for each ticket it receives), and its reference count is atomic.
    private struct Session: @unchecked Sendable {
        let pointer: OpaquePointer
    }

    init(capacity: Int = 1024) {
        self.capacity = capacity
    }

    deinit {
        sessions.withLock { sessions in
            for kept in sessions.values { for session in kept { SSL_SESSION_free(session.pointer) } }
        }
    }

    /// The key of a server: the name sent as SNI and checked, and the port.
    static func key(name: String, port: Int) -> String { "\(name):\(port)" }

    /// A session for `key`, now owned by the caller (`SSL_SESSION_free` it), or nil when none is kept.
    func take(for key: String) -> OpaquePointer? {
        sessions.withLock { $0[key]?.popLast()?.pointer }
    }

    /// Keeps `session` (its reference passes to the cache) for a later connection to `key`, when it is resumable and
    /// there is room; frees it otherwise.
    func keep(_ session: OpaquePointer, for key: String) {
        guard SSL_SESSION_is_resumable(session) == 1 else {
            SSL_SESSION_free(session)
            return
        }
        let kept = sessions.withLock { sessions in
            guard sessions[key, default: []].count < capacity else { return false }
            sessions[key, default: []].append(Session(pointer: session))
            return true
        }
        if !kept { SSL_SESSION_free(session) }
    }

    /// Sessions kept for `key`.
    func count(for key: String) -> Int { sessions.withLock { $0[key]?.count ?? 0 } }
}
