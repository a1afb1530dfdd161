import AuthloadCore
import CSystem
import Foundation

/// A fixed set of connections that requests take turns on; a request waits in line for a free one.
final class ConnectionPool: HTTPClient {
    private struct State {
        var idle: [SingleConnectionClient]
        var waiters = FIFOQueue<CheckedContinuation<SingleConnectionClient, Never>>()
    }

    private let state: Locked<State>
    private let make: @Sendable () -> SingleConnectionClient

    init(size: Int, make: @escaping @Sendable () -> SingleConnectionClient) {
        self.make = make
        state = Locked(State(idle: (0..<size).map { _ in make() }))
    }

    /// The wait for a free connection counts in the request's timing and its timeout: it is time the user
    /// waits, and timing from the send alone would hide a queue (coordinated omission). A free connection is
    /// taken without a continuation or a look at the clock; only a request that must wait in line makes one and
    /// measures its wait.
    func execute(_ request: HTTPRequest, timeout: Duration, isolation: isolated (any Actor)?) async throws -> HTTPResponse {
        let client: SingleConnectionClient
        var waited = Duration.zero
        if let idle = state.withLock({ $0.idle.popLast() }) {
            client = idle
        } else {
            let handedOff = MonotonicInstant.now
            client = await acquire(isolation: isolation)
            waited = handedOff.duration(to: MonotonicInstant.now)
        }
        defer { release(client) }
        guard waited < timeout else { throw TransportError(.timeout) }
        var response = try await client.execute(request, timeout: timeout - waited, isolation: isolation)
        response.timing.timeToFirstByte += waited
        response.timing.total += waited
        return response
    }

    /// A WebSocket holds its connection for its whole life, so it gets one of its own, outside the pool.
    func openWebSocket(_ request: HTTPRequest, protocols: [String], timeout: Duration) async throws -> any WebSocketConnection {
        try await make().openWebSocket(request, protocols: protocols, timeout: timeout)
    }

    /// Pooled connections outlive any one user's flow.
    func shutdown() {}

    private func acquire(isolation: isolated (any Actor)?) async -> SingleConnectionClient {
        await withCheckedContinuation(isolation: isolation) { continuation in
            let client = state.withLock { state -> SingleConnectionClient? in
                if let client = state.idle.popLast() { return client }
                state.waiters.append(continuation)
                return nil
            }
            if let client { continuation.resume(returning: client) }
        }
    }

    private func release(_ client: SingleConnectionClient) {
        let waiter = state.withLock { state -> CheckedContinuation<SingleConnectionClient, Never>? in
            if state.waiters.isEmpty {
                state.idle.append(client)
                return nil
            }
            return state.waiters.popFirst()
        }
        waiter?.resume(returning: client)
    }
}
