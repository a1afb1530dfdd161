import AuthloadCore
import AuthloadWire

/// One request on an HTTP/2 connection: what to send, who waits for the answer, the answer as it arrives, and the
/// marks that time it.
///
/// Made by the caller, which sets its waiter, and handed to one connection's loop; from then on touched only on
/// that loop's thread, which is why it is `@unchecked Sendable`. Its waiter hears the answer exactly once, from
/// ``finish(_:)``.
final class HTTP2Exchange: @unchecked Sendable {
    let fields: [HPACKHeader]
    let body: [UInt8]
    /// When the caller handed the request over (its first attempt's, when it is sent again): its latency runs from here.
    let start: MonotonicInstant
    let deadline: MonotonicInstant
    let connectDeadline: MonotonicInstant
    /// Who waits for the answer; set by the caller before the hand-off, taken by ``finish(_:)``.
    var waiter: Waiter?

    enum Waiter {
        /// A task. Unsafe rather than checked: the checked one allocates per request, and exactly-once is kept by
        /// ``finish(_:)`` taking it.
        case continuation(UnsafeContinuation<HTTPResponse, any Error>)
        /// Code on the loop that is no task (a test driving the connection step by step).
        case callback((Result<HTTPResponse, any Error>) -> Void)
    }
    /// The caller was cancelled; set on the loop, so a hand-off that comes after it finds it.
    var cancelled = false

    /// Since when it waits for a stream slot; nil while it has one or has not begun waiting.
    var waitingSince: MonotonicInstant?
    /// Time spent waiting for a stream slot and for flow-control window, so far.
    var streamWait = Duration.zero
    /// The stream it was sent on; nil while it waits for one.
    var streamID: UInt32?
    /// The body is not all sent: the server's window held part of it back since this instant.
    var windowWaitSince: MonotonicInstant?
    var head: HTTPResponse?
    var received: [UInt8] = []
    var firstByte: MonotonicInstant?
    /// The connection marks, when the request waited for its connection to connect.
    var connected: MonotonicInstant?
    var secured: MonotonicInstant?
    var reusedConnection = true
    /// The connection it was last handed to, which a cancellation resets its stream on.
    weak var connection: HTTP2ClientConnection?

    init(
        fields: [HPACKHeader], body: [UInt8], start: MonotonicInstant, deadline: MonotonicInstant,
        connectDeadline: MonotonicInstant
    ) {
        self.fields = fields
        self.body = body
        self.start = start
        self.deadline = deadline
        self.connectDeadline = min(connectDeadline, deadline)
    }

    var isFinished: Bool { waiter == nil }

    /// Stops a wait for a slot or window that ran until `now`, adding it to ``streamWait``.
    func endWaits(at now: MonotonicInstant) {
        if let since = waitingSince {
            streamWait += max(.zero, now - since)
            waitingSince = nil
        }
        if let since = windowWaitSince {
            streamWait += max(.zero, now - since)
            windowWaitSince = nil
        }
    }

    /// The response, timed: from the hand-off to the end of the stream, at `now`.
    func response(at now: MonotonicInstant) -> HTTPResponse {
        endWaits(at: now)
        var response = head ?? HTTPResponse(status: 0)
        response.body = received
        response.version = .http2
        let end = max(now, start)
        let connected = connected ?? start
        let secured = secured ?? connected
        response.timing = RequestTiming(
            connect: connected - start, tlsHandshake: secured - connected,
            timeToFirstByte: min(max(firstByte ?? end, start), end) - start, total: end - start,
            reusedConnection: reusedConnection, streamWait: streamWait)
        return response
    }

    /// Hands the caller its answer, once; later calls do nothing.
    func finish(_ result: Result<HTTPResponse, any Error>) {
        switch waiter.take() {
        case .continuation(let continuation)?: continuation.resume(with: result)
        case .callback(let callback)?: callback(result)
        case nil: break
        }
    }
}

/// Why an HTTP/2 request came back unanswered in a way the client handles itself.
enum HTTP2Detour: Error {
    /// The server chose HTTP/1.1 (or nothing) by ALPN: send the request on HTTP/1.1 instead.
    case serverSpeaksOnlyHTTP1
}

extension TransportError {
    /// A stream the server refused (RST_STREAM REFUSED_STREAM, or above the last stream of its GOAWAY): it was not
    /// processed, and is sent again on a connection that will take it (RFC 9113 §8.7), as a stale HTTP/1.1 connection's is.
    static let http2Refused = TransportError(
        .http2(code: HTTP2ErrorCode.refusedStream.rawValue, goAway: false), "h2 stream error REFUSED_STREAM")

    /// A request still waiting for a stream when its connection went away: it never left, and goes to another connection.
    static let http2Unsent = TransportError(.http2Unsent, "h2 GOAWAY before the stream was processed")

    /// A stream reset with `code` by the server, or by this side after the server broke a stream rule.
    static func http2StreamError(_ code: HTTP2ErrorCode) -> TransportError {
        TransportError(.http2(code: code.rawValue, goAway: false), "h2 stream error \(code)")
    }

    /// The connection ended under GOAWAY: the server's, with its code, or this side's after a connection error.
    static func http2GoAway(_ code: HTTP2ErrorCode, sentByServer: Bool) -> TransportError {
        TransportError(.http2(code: code.rawValue, goAway: true), sentByServer ? "h2 GOAWAY \(code)" : "h2 connection error \(code)")
    }
}
