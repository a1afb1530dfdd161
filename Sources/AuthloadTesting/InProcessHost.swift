import AuthloadCore

/// Runs a staging service in process for one flow at a time, as a discrete-event simulation on a ``ManualClock``.
///
/// The flow is the only thing that waits: when it waits for a response or a WebSocket message, the host
/// moves the clock from one scheduled event to the next (a reply's arrival, work the service scheduled
/// through ``WebSocketPeer/schedule(after:_:)``) until what the flow waits for is there or its timeout
/// passes. Timings are therefore exact — a status scheduled 1.5 s after a request arrives 1.5 s after it
/// on the clock — and a test of a whole flow against a real staging service runs in microseconds.
///
/// ```swift
/// let clock = ManualClock()
/// let host = InProcessHost(clock: clock, service: StagingServer(configuration: staging))
/// let client = host.makeClient(for: Endpoint(host: "staging", port: 80))
/// let outcome = await flow.run(context(client), user: user)
/// ```
///
/// Concurrent flows would take turns moving the same clock; for many users use ``SimulatedTransport``.
public final class InProcessHost: Transport, Sendable {
    public let clock: ManualClock
    let service: any HTTPService
    private let timeline = Locked(Timeline())

    public init(clock: ManualClock, service: any HTTPService) {
        self.clock = clock
        self.service = service
    }

    public func makeClient(for endpoint: Endpoint) -> any HTTPClient { Client(host: self) }

    /// Events scheduled but not yet run.
    public var pendingEvents: Int { timeline.withLock { $0.events.count } }

    // MARK: Timeline

    private struct Event {
        var at: ManualClock.Instant
        var order: UInt64
        var work: @Sendable () -> Void
    }

    private struct Timeline {
        var events: [Event] = []
        var nextOrder: UInt64 = 0
    }

    func schedule(after delay: Duration, _ work: @escaping @Sendable () -> Void) {
        let at = clock.now.advanced(by: max(.zero, delay))
        timeline.withLock { timeline in
            timeline.events.append(Event(at: at, order: timeline.nextOrder, work: work))
            timeline.nextOrder += 1
        }
    }

    /// The earliest pending event's time.
    var nextEventTime: ManualClock.Instant? {
        timeline.withLock { $0.events.min { ($0.at, $0.order) < ($1.at, $1.order) }?.at }
    }

    /// Runs the earliest event if it is due by `limit`, moving the clock to its time; false when none is.
    @discardableResult
    func runNextEvent(notAfter limit: ManualClock.Instant) -> Bool {
        let event: Event? = timeline.withLock { timeline in
            guard
                let index = timeline.events.indices.min(by: {
                    (timeline.events[$0].at, timeline.events[$0].order) < (timeline.events[$1].at, timeline.events[$1].order)
                }), timeline.events[index].at <= limit
            else { return nil }
            return timeline.events.remove(at: index)
        }
        guard let event else { return false }
        clock.advance(to: event.at)
        event.work()
        return true
    }

    /// Runs every event due by `instant`, in order, then moves the clock there.
    func run(until instant: ManualClock.Instant) {
        while runNextEvent(notAfter: instant) {}
        clock.advance(to: instant)
    }

    // MARK: The flow's clock

    /// A clock for the one flow the host serves: sleeping runs the host's events up to the deadline and
    /// moves time there at once, so a flow that pauses (holds a session, thinks) needs no test to drive it.
    public struct FlowClock: Clock {
        public typealias Instant = ManualClock.Instant
        let host: InProcessHost

        public var now: Instant { host.clock.now }
        public var minimumResolution: Duration { .zero }

        public func sleep(until deadline: Instant, tolerance: Duration?) async throws {
            try Task.checkCancellation()
            host.run(until: deadline)
        }
    }

    /// The clock to give the flow under test.
    public var flowClock: FlowClock { FlowClock(host: self) }

    // MARK: HTTP

    private struct Client: HTTPClient {
        let host: InProcessHost

        /// Answers off the caller's actor, as it did before clients took the caller's isolation:
        /// virtual-time runs keep their exact schedule.
        func execute(_ request: HTTPRequest, timeout: Duration, isolation: isolated (any Actor)?) async throws -> HTTPResponse {
            try await respond(to: request, timeout: timeout)
        }

        private func respond(to request: HTTPRequest, timeout: Duration) async throws -> HTTPResponse {
            try Task.checkCancellation()
            let start = host.clock.now
            let reply = host.service.respond(to: request)
            if let fault = reply.fault {
                host.run(until: start.advanced(by: fault.endsInTimeout ? timeout : min(reply.latency, timeout)))
                throw fault.clientError
            }
            guard reply.latency <= timeout else {
                host.run(until: start.advanced(by: timeout))
                throw TransportError(.timeout)
            }
            host.run(until: start.advanced(by: reply.latency))
            return try reply.delivered(after: reply.latency)
        }

        func openWebSocket(_ request: HTTPRequest, protocols: [String], timeout: Duration) async throws -> any WebSocketConnection {
            guard let service = host.service as? any WebSocketService else {
                throw WebSocketUpgradeRejected(response: HTTPResponse(status: 404))
            }
            let pipe = InProcessWebSocket(host: host)
            switch service.upgrade(request, offeredProtocols: protocols, peer: InProcessPeer(pipe: pipe)) {
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

/// Both ends of one in-process WebSocket: the client's connection, and the state the service's peer writes.
final class InProcessWebSocket: WebSocketConnection {
    let host: InProcessHost
    private let pipe = Locked(WebSocketPipe())

    init(host: InProcessHost) { self.host = host }

    func accept(handler: any WebSocketSessionHandler, subprotocol: String?) {
        pipe.withLock { $0.accept(handler: handler, subprotocol: subprotocol) }
    }

    var handshake: HTTPResponse { HTTPResponse(status: 101, reason: "Switching Protocols") }
    var subprotocol: String? { pipe.withLock { $0.subprotocol } }

    func send(_ message: WebSocketMessage) async throws {
        try pipe.withLock { pipe throws(WebSocketClosed) in try pipe.sessionForClientMessage() }?.received(message)
    }

    func receiveQueued(timeout: Duration) async throws -> ReceivedWebSocketMessage {
        let deadline = host.clock.now.advanced(by: timeout)
        while true {
            try Task.checkCancellation()
            let now = host.clock.now
            let next = pipe.withLock { $0.nextForClient(at: now) }
            switch next {
            case .success(let received): return received
            case .failure(let closed): throw closed
            case nil: break
            }
            if !host.runNextEvent(notAfter: deadline) {
                host.run(until: deadline)
                throw TransportError(.timeout, "no WebSocket message arrived within \(timeout)")
            }
        }
    }

    func close(code: Int, reason: String, timeout: Duration) async {
        pipe.withLock { $0.closeByClient(code: code, reason: reason) }?.closed(code: code)
    }

    // MARK: The service's side

    func serverSend(_ message: WebSocketMessage) {
        let now = host.clock.now
        _ = pipe.withLock { $0.deliverToClient(message, at: now) }
    }

    func serverClose(code: Int, reason: String) {
        // The client answers the close at once; the session hears the code it was closed with.
        pipe.withLock { $0.closeByServer(code: code, reason: reason) }?.closed(code: code)
    }
}

/// The service's handle on an ``InProcessWebSocket``.
struct InProcessPeer: WebSocketPeer {
    let pipe: InProcessWebSocket

    func send(_ message: WebSocketMessage) { pipe.serverSend(message) }
    func close(code: Int, reason: String) { pipe.serverClose(code: code, reason: reason) }
    func schedule(after delay: Duration, _ work: @escaping @Sendable () -> Void) { pipe.host.schedule(after: delay, work) }
}
