/// The iteration's HTTP client as a flow's ``FlowContext`` holds it: every request it puts on the wire is
/// counted, in one place for every flow.
///
/// A request counts however a flow sends it — a step, a retry after a 429, one call of a two-call refresh, a
/// WebSocket upgrade — so the count matches what the server's access log sees. A request counts once it is handed
/// to the transport, except when the transport says it never left: the connection was refused, timed out while
/// connecting, the host name did not resolve, the TLS handshake failed, or the generator could not open a
/// connection at all. A request that times out waiting for its answer counts.
///
/// A request the transport sent again because the server had not processed it (an HTTP/2 stream refused, or left
/// out by a GOAWAY) still counts once, as the access log has it; its resends count apart (`httpResent`), whether it
/// was answered in the end or failed, since the server refused each of them. One the server refused every time it
/// was sent, until the transport gave up, is in no access log and counts only its resends.
///
/// The context holds only this, never the bare client, so no way of sending can skip the count. It is a plain
/// struct and takes the send's instant from its caller: as an `HTTPClient` made generic over the clock and boxed
/// for every flow iteration, it cost every request an allocation, a metadata lookup, a clock reading and an async
/// call level.
struct CountingClient: Sendable {
    let base: any HTTPClient
    let recorder: MetricsRecorder
    /// The flow's series (the catalog numbers it just before the flow's first step).
    let flowMetric: Int
    let shard: Int

    /// Sends `request` through the transport and counts it.
    ///
    /// - Parameter sent: when it was handed over, from the start of the run: the interval it counts in.
    @inline(__always)
    func execute(
        _ request: HTTPRequest, timeout: Duration, sentAt sent: Duration, isolation: isolated (any Actor)? = #isolation
    ) async throws -> HTTPResponse {
        do {
            let response = try await base.execute(request, timeout: timeout, isolation: isolation)
            count(sentAt: sent, version: response.version, resent: response.resent)
            return response
        } catch {
            let resent = (error as? TransportError)?.resent ?? 0
            if Self.reachedTheWire(error) {
                count(sentAt: sent, version: nil, resent: resent)
            } else if resent > 0 {
                recorder.countResent(resent, metric: flowMetric, startOffset: sent, shard: shard)
            }
            throw error
        }
    }

    /// Opens a WebSocket (see ``HTTPClient/openWebSocket(_:protocols:timeout:)``) and counts its upgrade request.
    func openWebSocket(_ request: HTTPRequest, protocols: [String], timeout: Duration, sentAt sent: Duration) async throws
        -> any WebSocketConnection
    {
        do {
            let socket = try await base.openWebSocket(request, protocols: protocols, timeout: timeout)
            // A WebSocket opens over HTTP/1.1 whatever the flow's other requests use.
            count(sentAt: sent, version: .http1)
            return socket
        } catch {
            if Self.reachedTheWire(error) { count(sentAt: sent, version: nil) }
            throw error
        }
    }

    private func count(sentAt sent: Duration, version: HTTPVersion?, resent: Int = 0) {
        recorder.countRequest(metric: flowMetric, startOffset: sent, shard: shard, version: version, resent: resent)
    }

    /// Whether a request that failed was sent at all, and reached the server's logic.
    static func reachedTheWire(_ error: any Error) -> Bool {
        guard let error = error as? TransportError else { return !(error is CancellationError) }
        if error.isUnprocessedByServer { return false }
        switch error.kind {
        case .connectionRefused, .connectTimeout, .nameResolution, .tls, .cancelled, .generatorLimit: return false
        default: return true
        }
    }
}
