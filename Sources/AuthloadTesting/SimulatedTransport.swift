import AuthloadCore

/// A transport without sockets: a responder answers each request at once, and the answer is delivered
/// after the latency it names, on the injected clock.
///
/// The staging services run behind it for virtual-time runs; tests script it directly.
public struct SimulatedTransport<C: Clock>: Transport where C.Duration == Duration {
    public typealias Responder = @Sendable (HTTPRequest, Endpoint) -> ServiceReply

    private let clock: C
    private let respond: Responder

    public init(clock: C, respond: @escaping Responder) {
        self.clock = clock
        self.respond = respond
    }

    /// Puts `service` behind the transport, whatever endpoint a client names.
    public init(clock: C, service: any HTTPService) {
        self.init(clock: clock) { request, _ in service.respond(to: request) }
    }

    public func makeClient(for endpoint: Endpoint) -> any HTTPClient {
        Client(clock: clock, endpoint: endpoint, respond: respond)
    }

    private struct Client: HTTPClient {
        let clock: C
        let endpoint: Endpoint
        let respond: Responder

        /// Answers off the caller's actor, as it did before clients took the caller's isolation:
        /// virtual-time runs keep their exact schedule.
        func execute(_ request: HTTPRequest, timeout: Duration, isolation: isolated (any Actor)?) async throws -> HTTPResponse {
            try await respond(to: request, timeout: timeout)
        }

        private func respond(to request: HTTPRequest, timeout: Duration) async throws -> HTTPResponse {
            let start = clock.now
            let reply = respond(request, endpoint)
            // A fault that leaves the client waiting ends at its timeout; the others where the answer would have come.
            let arrival = reply.fault?.endsInTimeout == true ? timeout : reply.latency
            try await clock.sleep(until: start.advanced(by: min(arrival, timeout)), tolerance: nil)
            if let fault = reply.fault { throw fault.clientError }
            if reply.latency > timeout { throw TransportError(.timeout) }
            return try reply.delivered(after: reply.latency)
        }

        // In-process WebSockets are InProcessHost's (AuthloadTesting), for one flow at a time; a flow that
        // opens a socket through this many-user transport fails clearly.
        func openWebSocket(_ request: HTTPRequest, protocols: [String], timeout: Duration) async throws -> any WebSocketConnection {
            throw TransportError(.other, "WebSocket is not implemented on this transport yet")
        }

        func shutdown() {}
    }
}
