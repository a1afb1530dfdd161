import AuthloadCore
import COpenSSL

/// Reads OpenSSL's per-thread error queue into words a user can act on.
///
/// The queue holds codes such as `error:0A000086:SSL routines::certificate verify failed`; the reason
/// part alone ("certificate verify failed") is what a report should show.
enum OpenSSLError {
    /// Empties the calling thread's queue, so the next failure is not blamed on an old one.
    static func clear() { ERR_clear_error() }

    /// The reasons queued on this thread, oldest first, without repeats; empties the queue.
    static func drain() -> [String] {
        var reasons: [String] = []
        while case let code = ERR_get_error(), code != 0 {
            let reason = ERR_reason_error_string(code).map { String(cString: $0) } ?? "OpenSSL error \(code)"
            if !reasons.contains(reason) { reasons.append(reason) }
        }
        return reasons
    }

    /// A `.tls` transport error: `what` failed, then the queued reasons, or `fallback` when none are queued.
    static func error(_ what: String, fallback: String = "no detail from OpenSSL") -> TransportError {
        let reasons = drain()
        return TransportError(.tls, "\(what): \(reasons.isEmpty ? fallback : reasons.joined(separator: "; "))")
    }
}
