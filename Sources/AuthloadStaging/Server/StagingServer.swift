import AuthloadCore

/// The embedded staging stack: every staging service behind one ``HTTPService``.
///
/// It never knows whether it sits behind a socket (`authload serve`, embedded targets) or an
/// in-process transport (virtual-time tests).
public final class StagingServer: HTTPService, WebSocketService, ConnectionFaultInjecting {
    public let fcsdk: FCSDKLoginService
    public let gccs: GCCSService
    public let streem: StreemService
    public let okta: OktaIDXService
    /// Every request and WebSocket upgrade the server answered, by route; empty when the server keeps none.
    public let accessLog = AccessLog()
    private let logsAccess: Bool
    private let faults: FaultInjection?
    private let faultDraws: Locked<SplitMix64>

    /// - Parameters:
    ///   - logsAccess: whether ``accessLog`` counts requests. A simulation keeps none: nothing reads it, and counting
    ///     each request was 1.5 % of a simulated day's CPU.
    ///   - now: the time since the Unix epoch for services that date their answers (token lifetimes, Okta's `Date`,
    ///     rate-limit resets, expiries); a virtual-time run passes one derived from its clock.
    public init(configuration: StagingConfiguration, logsAccess: Bool = true, now: @escaping WallClock = WallTime.now) {
        self.logsAccess = logsAccess
        fcsdk = FCSDKLoginService(options: configuration.fcsdk, seed: configuration.seed)
        gccs = GCCSService(options: configuration.gccs, seed: configuration.seed &+ 1)
        streem = StreemService(options: configuration.streem, seed: configuration.seed &+ 2, now: now)
        okta = OktaIDXService(options: configuration.okta, seed: configuration.seed &+ 3, now: now)
        faults = configuration.faults
        faultDraws = Locked(SplitMix64(seed: configuration.seed &+ 4))
    }

    /// The service's answer, broken on the wire when fault injection draws a fault for it.
    public func respond(to request: HTTPRequest) -> ServiceReply {
        // The path is found once: the access log and each service in turn read it.
        let path = request.path
        if logsAccess { accessLog.record(request, path: path) }
        var reply = route(request, path: path)
        if let faults { reply.fault = faultDraws.withLock { faults.draw(path: String(path), using: &$0) } }
        return reply
    }

    public func connectionFault() -> WireFault? {
        guard let faults else { return nil }
        return faultDraws.withLock { faults.drawHandshake(using: &$0) } ? .tlsHandshake : nil
    }

    private func route(_ request: HTTPRequest, path: Substring) -> ServiceReply {
        if path == "/health" { return ServiceReply(.json(status: 200, ["status": "ok"])) }
        if let reply = fcsdk.respond(to: request, path: path) { return reply }
        if let reply = gccs.respond(to: request, path: path) { return reply }
        if let reply = streem.respond(to: request, path: path) { return reply }
        if let reply = okta.respond(to: request, path: path) { return reply }
        return ServiceReply(.json(status: 404, ["error": .string("no staging service at \(request.path)")]))
    }

    public func upgrade(_ request: HTTPRequest, offeredProtocols: [String], peer: any WebSocketPeer) -> WebSocketUpgrade {
        if logsAccess { accessLog.record(request, path: request.path) }
        return gccs.upgrade(request, offeredProtocols: offeredProtocols, peer: peer)
    }
}

/// The options of the embedded staging server, as a profile's `target.embedded` or `serve --config` gives them.
///
/// ```json
/// {"tls": true, "fcsdk": {"latency": {"lognormal": {"median": "8ms", "p99": "60ms"}}, "errorRate": 0.01, "setCookie": "JSESSIONID"}}
/// ```
public struct StagingConfiguration: Sendable, Equatable {
    public var fcsdk = FCSDKLoginService.Options()
    public var gccs = GCCSService.Options()
    public var streem = StreemService.Options()
    public var okta = OktaIDXService.Options()
    public var seed: UInt64 = 7
    /// Serve HTTPS with a self-signed certificate made for the run (`"tls": true`); the socket side reads it.
    public var tls = false
    /// Workers and a queue in front of every service (`"capacity"`); nil: unlimited. See ``CapacityModel``.
    public var capacity: CapacityModel.Options?
    /// Per-request (and per-connection) faults (`"faults"`); nil: none. See ``FaultInjection``.
    public var faults: FaultInjection?

    public init() {}

    public static func read(_ reader: ProfileReader) throws(ProfileError) -> StagingConfiguration {
        var configuration = StagingConfiguration()
        try reader.rejectUnknownKeys(allowed: ["fcsdk", "gccs", "streem", "okta", "seed", "tls", "capacity", "faults"])
        if let tls = try reader.optional("tls") { configuration.tls = try tls.bool() }
        if let faults = try reader.optional("faults") { configuration.faults = try FaultInjection.read(faults) }
        if let capacity = try reader.optional("capacity") { configuration.capacity = try CapacityModel.Options.read(capacity) }
        if let seed = try reader.optional("seed") { configuration.seed = UInt64(max(0, try seed.int())) }
        if let fcsdk = try reader.optional("fcsdk") {
            try fcsdk.rejectUnknownKeys(allowed: [
                "loginPath", "latency", "errorRate", "errorStatus", "password", "voiceDomain", "setCookie"
            ])
            var options = FCSDKLoginService.Options()
            if let r = try fcsdk.optional("loginPath") { options.loginPath = try r.string() }
            if let r = try fcsdk.optional("latency") { options.latency = try LatencyModel.read(r) }
            if let r = try fcsdk.optional("errorRate") { options.errorRate = try r.fraction() }
            if let r = try fcsdk.optional("errorStatus") {
                options.errorStatus = try r.int()
                guard (400...599).contains(options.errorStatus) else { throw r.error("must be an HTTP error status (400–599)") }
            }
            if let r = try fcsdk.optional("password") { options.password = try r.string() }
            if let r = try fcsdk.optional("voiceDomain") { options.voiceDomain = try r.string() }
            if let r = try fcsdk.optional("setCookie") { options.setCookie = try r.string() }
            configuration.fcsdk = options
        }
        if let gccs = try reader.optional("gccs") { configuration.gccs = try GCCSService.Options.read(gccs) }
        if let streem = try reader.optional("streem") { configuration.streem = try StreemService.Options.read(streem) }
        if let okta = try reader.optional("okta") { configuration.okta = try OktaIDXService.Options.read(okta) }
        return configuration
    }
}
