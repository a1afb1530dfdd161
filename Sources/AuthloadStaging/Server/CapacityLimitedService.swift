import AuthloadCore

/// Puts a service behind a ``CapacityModel``: its replies wait for a worker and a place in the queue.
///
/// The model runs on the injected clock, so the same server saturates at the same rate behind a socket
/// (`ContinuousClock`) and in a virtual-time test (`ManualClock`). The wrapped service's reply latency is
/// the service time, unless the options name a service-time distribution of their own.
public final class CapacityLimitedService<C: Clock>: HTTPService where C.Duration == Duration {
    private struct State {
        var model: CapacityModel
        var random: SplitMix64
    }

    private let service: any HTTPService
    private let clock: C
    private let origin: C.Instant
    private let state: Locked<State>

    public init(_ service: any HTTPService, options: CapacityModel.Options, clock: C, seed: UInt64 = 11) {
        self.service = service
        self.clock = clock
        self.origin = clock.now
        self.state = Locked(State(model: CapacityModel(options: options), random: SplitMix64(seed: seed)))
    }

    public func respond(to request: HTTPRequest) -> ServiceReply {
        let reply = service.respond(to: request)
        let clock = self.clock
        let origin = self.origin
        let admission = state.withLock { state in
            let serviceTime = state.model.options.serviceTime?.sample(using: &state.random) ?? reply.latency
            // Read under the lock, so admissions reach the model in time order.
            return state.model.admit(now: origin.duration(to: clock.now), serviceTime: serviceTime)
        }
        switch admission {
        case .serve(let after, _):
            var delayed = reply
            delayed.latency = after
            return delayed
        case .reject:
            return ServiceReply(.json(status: 503, ["error": "server busy: every worker busy and the queue full"]))
        }
    }

    /// Requests waiting for a worker right now (at the last admission).
    public var queued: Int { state.withLock { $0.model.queued } }
}

extension StagingServer {
    /// The embedded staging server as configured: behind its capacity model when it has one.
    public static func service<Clk: Clock>(configuration: StagingConfiguration, clock: Clk) -> any HTTPService
    where Clk.Duration == Duration {
        StagingServer(configuration: configuration).service(configuration: configuration, clock: clock)
    }

    /// This server behind the capacity model `configuration` names, or itself when it names none; its
    /// ``accessLog`` counts every request either way.
    public func service<Clk: Clock>(configuration: StagingConfiguration, clock: Clk) -> any HTTPService where Clk.Duration == Duration {
        guard let capacity = configuration.capacity else { return self }
        return CapacityLimitedService(self, options: capacity, clock: clock, seed: configuration.seed &+ 1)
    }
}

/// The capacity model limits HTTP requests; WebSocket upgrades and connection faults pass to the server it wraps,
/// so a GCCS status stream or a failed TLS handshake works the same with or without it.
extension CapacityLimitedService: WebSocketService, ConnectionFaultInjecting {
    public func upgrade(_ request: HTTPRequest, offeredProtocols: [String], peer: any WebSocketPeer) -> WebSocketUpgrade {
        guard let sockets = service as? any WebSocketService else {
            return .reject(.json(status: 404, ["error": .string("no WebSocket endpoint at \(request.path)")]))
        }
        return sockets.upgrade(request, offeredProtocols: offeredProtocols, peer: peer)
    }

    public func connectionFault() -> WireFault? { (service as? any ConnectionFaultInjecting)?.connectionFault() }
}
