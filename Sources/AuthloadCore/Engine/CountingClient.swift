/// An ``HTTPClient`` that counts every HTTP request its flow puts on the wire, in one place for every flow.
///
/// ``FlowContext`` hands flows this client, so a request counts however a flow sends it — a step, a retry
/// after a 429, one call of a two-call refresh, a WebSocket upgrade — and the count matches what the
/// server's access log sees. A request counts once it is handed to the transport, except when the
/// transport says it never left: the connection was refused, timed out while connecting, the host name did
/// not resolve, the TLS handshake failed, or the generator could not open a connection at all. A request that times out waiting for its answer counts.
struct CountingClient<C: Clock>: HTTPClient where C.Duration == Duration {
    let base: any HTTPClient
    let clock: C
    let recorder: MetricsRecorder
    let flowMetric: Int
    let shard: Int
    let runStart: C.Instant

    func execute(_ request: HTTPRequest, timeout: Duration, isolation: isolated (any Actor)?) async throws -> HTTPResponse {
        let sent = clock.now
        do {
            let response = try await base.execute(request, timeout: timeout, isolation: isolation)
            count(sentAt: sent)
            return response
        } catch {
            if Self.reachedTheWire(error) { count(sentAt: sent) }
            throw error
        }
    }

    func openWebSocket(_ request: HTTPRequest, protocols: [String], timeout: Duration) async throws -> any WebSocketConnection {
        let sent = clock.now
        do {
            let socket = try await base.openWebSocket(request, protocols: protocols, timeout: timeout)
            count(sentAt: sent)
            return socket
        } catch {
            if Self.reachedTheWire(error) { count(sentAt: sent) }
            throw error
        }
    }

    func shutdown() { base.shutdown() }

    private func count(sentAt sent: C.Instant) {
        recorder.countRequest(metric: flowMetric, startOffset: runStart.duration(to: sent), shard: shard)
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
