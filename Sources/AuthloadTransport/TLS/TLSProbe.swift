import AuthloadCore
import CSystem
import Foundation

/// One TLS handshake with a target before a run's load starts.
///
/// A certificate every connection would fail over (another CA, expired, another name, a client certificate
/// the server wants or refuses) is then reported once, at the start, rather than as the errors of a whole run.
/// Only a failure ``TLSFailure`` names counts: a target that refuses or does not answer is left for the run,
/// which reports it per request as ever.
///
/// ```swift
/// if let failure = await TLSProbe.failure(connectingTo: endpoint, configuration: tls, timeout: .seconds(5)) { ... }
/// let outcome = await TLSProbe.handshake(connectingTo: endpoint, configuration: tls, offering: ["h2", "http/1.1"], timeout: .seconds(5))
/// ```
public enum TLSProbe {
    /// How long after its handshake the probe waits for the server's verdict on the client's certificate: a
    /// TLS 1.3 server sends it only after the client has finished its part.
    static let settle = Duration.milliseconds(250)

    /// What one handshake found.
    public struct Outcome: Sendable, Equatable {
        /// Why TLS failed, when it did for a reason a ``TLSFailure`` names.
        public var failure: TLSFailure?
        /// Whether the handshake completed (a refused or silent target leaves it undone, and the run reports it).
        public var completed = false
        /// The protocol the server chose by ALPN (`h2`, `http/1.1`), nil when it chose none or none was offered.
        public var negotiatedProtocol: String?
    }

    /// Connects to `endpoint`, completes the TLS handshake as the run's connections would (same context, same
    /// name, offering `protocols` by ALPN), waits up to ``settle`` for an alert, and closes without sending a request,
    /// so the server's access log shows no extra request. Blocks the calling thread for at most `timeout`.
    public static func handshake(
        connectingTo endpoint: Endpoint, configuration: TLSClientConfiguration, offering protocols: [String] = [], timeout: Duration
    ) async -> Outcome {
        guard endpoint.tls, let context = try? TLSClientContext(configuration: configuration),
            let address = try? await Resolver().resolve(host: endpoint.host, port: endpoint.port, isolation: nil),
            let fd = try? Sockets.connect(to: address, from: nil, target: "\(endpoint.host):\(endpoint.port)")
        else { return Outcome() }
        defer { SystemCalls.close(fd) }
        let deadline = MonotonicInstant.now + timeout
        guard wait(fd, for: EPOLLOUT.rawValue, until: deadline), (try? SystemCalls.pendingError(fd)) == 0,
            let stream = try? context.makeStream(fd: fd, host: endpoint.host, port: endpoint.port, protocols: protocols)
        else { return Outcome() }
        defer { stream.shutdown() }
        while true {
            switch stream.handshake() {
            case .done: break
            case .wouldBlock(let interest):
                guard wait(fd, for: interest, until: deadline) else { return Outcome() }
                continue
            case .failed(let error): return Outcome(failure: error.tlsFailure)
            case .end: return Outcome()
            }
            break
        }
        let done = Outcome(completed: true, negotiatedProtocol: stream.negotiatedProtocol)
        let settled = min(deadline, MonotonicInstant.now + settle)
        var buffer = [UInt8](repeating: 0, count: 512)
        while true {
            switch buffer.withUnsafeMutableBytes({ stream.read(into: $0) }) {
            case .failed(let error):
                var alerted = done
                alerted.failure = error.tlsFailure
                return alerted
            case .wouldBlock(let interest):
                // Session tickets come and are taken in; only an alert ends the wait early.
                guard wait(fd, for: interest, until: settled) else { return done }
            case .done, .end: return done
            }
        }
    }

    /// ``handshake(connectingTo:configuration:offering:timeout:)``'s failure alone.
    ///
    /// - Returns: why TLS failed, when it did for a reason a ``TLSFailure`` names; nil otherwise.
    public static func failure(connectingTo endpoint: Endpoint, configuration: TLSClientConfiguration, timeout: Duration) async
        -> TLSFailure?
    {
        await handshake(connectingTo: endpoint, configuration: configuration, timeout: timeout).failure
    }

    /// Waits until `fd` is ready for `interest` (EPOLLIN or EPOLLOUT), or `deadline` passes (false).
    private static func wait(_ fd: Int32, for interest: UInt32, until deadline: MonotonicInstant) -> Bool {
        var entry = pollfd(fd: fd, events: Int16(interest == EPOLLOUT.rawValue ? POLLOUT : POLLIN), revents: 0)
        while true {
            let left = MonotonicInstant.now.duration(to: deadline)
            guard left > .zero else { return false }
            let milliseconds = Int32(clamping: max(1, left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000))
            // An interrupted poll is made again; one that fails gives up, as a wait that ran out would.
            guard let ready = try? syscall(blocking: false, where: "poll", { poll(&entry, 1, milliseconds) }) else { return false }
            if case .processed(let count) = ready, count > 0 { return true }
        }
    }
}
