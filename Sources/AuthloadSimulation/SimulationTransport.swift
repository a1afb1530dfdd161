import AuthloadCore

/// The embedded services behind an in-process transport on virtual time: what a simulated run sends instead of
/// opening sockets.
///
/// A request reaches the service at once; its reply arrives after the latency the service (or its capacity model)
/// names, on the ``SimulationClock``. WebSockets are in-process pipes whose messages the service paces with the
/// clock's timers. Every user runs on the ``SimulationExecutor`` (``executor(forUser:)``), which is what keeps the
/// run on one thread and in a fixed order.
///
/// What it leaves out, a simulation cannot tell: connection setup, TLS, the network's latency and loss, the
/// generator's own CPU, and faults that break a TLS handshake (``ConnectionFaultInjecting``).
public final class SimulationTransport: Transport, Sendable {
    let clock: SimulationClock
    let simulation: SimulationExecutor
    let service: any HTTPService

    public init(clock: SimulationClock, executor: SimulationExecutor, service: any HTTPService) {
        self.clock = clock
        self.simulation = executor
        self.service = service
    }

    public func makeClient(for endpoint: Endpoint) -> any HTTPClient { Client(transport: self) }

    public func executor(forUser user: Int) -> (any SerialExecutor & TaskExecutor)? { simulation }

    /// Users' tasks run isolated to the simulation's executor, with no preference to look up at every executor check.
    public var isolatesUserTasks: Bool { true }

    /// One thread carries every user, so one recording shard takes every sample.
    public var userThreads: Int? { 1 }

    /// The client holds nothing of its own: one serves the whole run.
    public var sharesClients: Bool { true }

    private struct Client: HTTPClient {
        let transport: SimulationTransport

        func execute(_ request: HTTPRequest, timeout: Duration, isolation: isolated (any Actor)?) async throws -> HTTPResponse {
            try Task.checkCancellation()
            let clock = transport.clock
            let start = clock.now
            let reply = transport.service.respond(to: request)
            // A fault that leaves the client waiting ends at its timeout; the others where the answer would have come.
            let arrival = reply.fault?.endsInTimeout == true ? timeout : reply.latency
            try await clock.wait(until: start.advanced(by: min(arrival, timeout)), isolation: isolation)
            if let fault = reply.fault { throw fault.clientError }
            if reply.latency > timeout { throw TransportError(.timeout) }
            return try reply.delivered(after: reply.latency)
        }

        func openWebSocket(_ request: HTTPRequest, protocols: [String], timeout: Duration) async throws -> any WebSocketConnection {
            try Task.checkCancellation()
            guard let service = transport.service as? any WebSocketService else {
                throw WebSocketUpgradeRejected(response: HTTPResponse(status: 404))
            }
            let pipe = SimulatedWebSocket(clock: transport.clock)
            switch service.upgrade(request, offeredProtocols: protocols, peer: SimulatedPeer(pipe: pipe)) {
            case .reject(let response):
                throw WebSocketUpgradeRejected(response: response)
            case .accept(let handler, let subprotocol):
                pipe.accept(handler: handler, subprotocol: subprotocol)
                return pipe
            }
        }

        func shutdown() {}
    }
}
