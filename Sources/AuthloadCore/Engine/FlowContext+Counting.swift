/// Every HTTP request a flow puts on the wire is counted here, in one place for every flow.
///
/// A request counts however a flow sends it — a step, a retry after a 429, one call of a two-call refresh, a
/// WebSocket upgrade — so the count matches what the server's access log sees. A request counts once it is handed
/// to the transport, except when the transport says it never left: the connection was refused, timed out while
/// connecting, the host name did not resolve, the TLS handshake failed, or the generator could not open a
/// connection at all. A request that times out waiting for its answer counts.
///
/// Counting is part of sending rather than a wrapper around the client: a wrapper made per flow iteration cost an
/// existential box, a generic-metadata lookup, a clock reading and an async call level on every request.
extension FlowContext {
    /// Opens a WebSocket on this iteration's client (see ``HTTPClient/openWebSocket(_:protocols:timeout:)``), counting its
    /// upgrade request.
    public func openWebSocket(_ request: HTTPRequest, protocols: [String], timeout: Duration) async throws -> any WebSocketConnection {
        let sent = clock.now
        do {
            let socket = try await client.openWebSocket(request, protocols: protocols, timeout: timeout)
            countRequest(sentAt: sent)
            return socket
        } catch {
            if Self.reachedTheWire(error) { countRequest(sentAt: sent) }
            throw error
        }
    }

    /// Counts one request in the flow's series (the catalog numbers it just before the first step's), in the interval
    /// it was sent in.
    func countRequest(sentAt sent: C.Instant) {
        recorder.countRequest(metric: firstStepMetric - 1, startOffset: runStart.duration(to: sent), shard: shard)
    }

    /// Whether a request that failed was sent at all.
    static func reachedTheWire(_ error: any Error) -> Bool {
        guard let error = error as? TransportError else { return !(error is CancellationError) }
        switch error.kind {
        case .connectionRefused, .connectTimeout, .nameResolution, .tls, .cancelled, .generatorLimit: return false
        default: return true
        }
    }
}
