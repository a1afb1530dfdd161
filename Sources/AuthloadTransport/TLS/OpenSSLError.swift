import AuthloadCore
import COpenSSL

/// Reads OpenSSL's per-thread error queue into words a user can act on.
///
/// The queue holds codes such as `error:0A000086:SSL routines::certificate verify failed`; the reason
/// part alone ("certificate verify failed") is what a report should show.
enum OpenSSLError {
    /// Empties the calling thread's queue, so the next failure is not blamed on an old one.
    static func clear() { ERR_clear_error() }

    /// Checks, in debug builds, that the calling thread's queue is empty: where a caller relies on every earlier
    /// call having cleared or drained it instead of clearing it itself.
    static func assertEmpty(file: StaticString = #fileID, line: UInt = #line) {
        assert(ERR_peek_error() == 0, "OpenSSL's error queue holds a stale entry", file: file, line: line)
    }

    /// One error OpenSSL queued: the library and reason codes (`ERR_LIB_SSL`, `SSL_R_…`), which code decides on,
    /// and the reason's text, which people read.
    struct Reason: Equatable {
        let library: Int32
        let code: Int32
        let text: String

        /// Whether it is this reason of libssl's (an `SSL_R_…` constant).
        func isSSL(_ reason: Int32) -> Bool { library == ERR_LIB_SSL && code == reason }
    }

    /// The errors queued on this thread, oldest first, without repeats; empties the queue.
    static func drainReasons() -> [Reason] {
        var reasons: [Reason] = []
        while case let code = ERR_get_error(), code != 0 {
            let text = ERR_reason_error_string(code).map { String(cString: $0) } ?? "OpenSSL error \(code)"
            let reason = Reason(library: ERR_GET_LIB(code), code: ERR_GET_REASON(code), text: text)
            if !reasons.contains(reason) { reasons.append(reason) }
        }
        return reasons
    }

    /// The reasons' texts queued on this thread, oldest first, without repeats; empties the queue.
    static func drain() -> [String] {
        var texts: [String] = []
        for reason in drainReasons() where !texts.contains(reason.text) { texts.append(reason.text) }
        return texts
    }

    /// A `.tls` transport error: `what` failed, then the queued reasons, or `fallback` when none are queued.
    static func error(_ what: String, fallback: String = "no detail from OpenSSL") -> TransportError {
        let reasons = drain()
        return TransportError(.tls, "\(what): \(reasons.isEmpty ? fallback : reasons.joined(separator: "; "))")
    }
}
