import AuthloadCore

/// A transport of a few shared connections in virtual time: each connection carries one request at a
/// time, and requests wait in order for the first free one — the queue a stalled server builds in a
/// real connection pool.
///
/// A request handed off at `t` is sent at `max(t, first free connection)`; the responder sees that send
/// instant and names the reply's latency, and the connection is busy until the reply arrives. The whole
/// schedule is decided at hand-off, so a request costs one sleep on the clock however long it queues.
/// Like the socket pool, a response's timing counts from the hand-off, queue included; a request whose
/// answer would come after its timeout throws a timeout at the timeout (its connection stays busy).
///
/// ```swift
/// let pool = PooledSimulatedTransport(clock: clock, connections: 10) { request, sentAt in
///     ServiceReply(HTTPResponse(status: 200), after: .milliseconds(10))
/// }
/// ```
public final class PooledSimulatedTransport<C: Clock>: Transport, Sendable where C.Duration == Duration {
    /// Answers a request sent at the given instant; called under the pool's lock, so it must not block.
    public typealias Responder = @Sendable (HTTPRequest, _ sentAt: C.Instant) -> ServiceReply

    private let clock: C
    private let respond: Responder
    private let freeAt: Locked<[C.Instant]>

    public init(clock: C, connections: Int, respond: @escaping Responder) {
        precondition(connections > 0)
        self.clock = clock
        self.respond = respond
        self.freeAt = Locked(Array(repeating: clock.now, count: connections))
    }

    public func makeClient(for endpoint: Endpoint) -> any HTTPClient { Client(pool: self) }

    fileprivate func execute(_ request: HTTPRequest, timeout: Duration) async throws -> HTTPResponse {
        let handedOff = clock.now
        let respond = self.respond
        let (sentAt, reply) = freeAt.withLock { free in
            var first = 0
            for index in free.indices where free[index] < free[first] { first = index }
            let sentAt = max(handedOff, free[first])
            let reply = respond(request, sentAt)
            free[first] = sentAt.advanced(by: reply.latency)
            return (sentAt, reply)
        }
        let answered = sentAt.advanced(by: reply.latency)
        let deadline = handedOff.advanced(by: timeout)
        try await clock.sleep(until: min(answered, deadline), tolerance: nil)
        if answered > deadline { throw TransportError(.timeout) }
        return try reply.delivered(after: handedOff.duration(to: answered))
    }

    private struct Client: HTTPClient {
        let pool: PooledSimulatedTransport

        /// Answers off the caller's actor (the pool is a nonisolated async call), so virtual-time runs keep
        /// their exact schedule.
        func execute(_ request: HTTPRequest, timeout: Duration, isolation: isolated (any Actor)?) async throws -> HTTPResponse {
            try await pool.execute(request, timeout: timeout)
        }

        func openWebSocket(_ request: HTTPRequest, protocols: [String], timeout: Duration) async throws -> any WebSocketConnection {
            throw TransportError(.other, "the simulated pool carries HTTP requests only")
        }

        func shutdown() {}
    }
}
