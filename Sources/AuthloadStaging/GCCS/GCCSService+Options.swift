import AuthloadCore
import AuthloadWire

extension GCCSService.Options {
    /// Reads `target.embedded.gccs`:
    ///
    /// ```json
    /// {"nodeDelay": {"lognormal": {"median": "300ms", "p99": "3s"}}, "authTimeRemaining": "60s",
    ///  "failureRate": 0.01, "timeoutRate": 0.01, "busyRate": 0, "cancelRaceRate": 0,
    ///  "stompErrorRate": 0, "socketDropRate": 0, "rejectRate": 0, "latency": {"fixed": "5ms"},
    ///  "verifyEncodedFields": true, "skipStatuses": ["CreateChannel"], "repeatStatuses": false, "secondaryAuthRate": 0.5}
    /// ```
    public static func read(_ reader: ProfileReader) throws(ProfileError) -> Self {
        try reader.rejectUnknownKeys(allowed: [
            "apiPrefix", "socketPath", "queue", "latency", "nodeDelay", "authTimeRemaining", "clientKey", "failureRate", "timeoutRate",
            "busyRate", "cancelRaceRate", "stompErrorRate", "socketDropRate", "rejectRate", "verifyEncodedFields",
            "skipStatuses", "repeatStatuses", "secondaryAuthRate"
        ])
        var options = Self()
        options.paths = try GCCSPaths.read(reader)
        if let r = try reader.optional("latency") { options.latency = try LatencyModel.read(r) }
        if let r = try reader.optional("nodeDelay") { options.nodeDelay = try LatencyModel.read(r) }
        if let r = try reader.optional("authTimeRemaining") { options.authTimeRemaining = try r.positiveDuration() }
        if let r = try reader.optional("clientKey") { options.clientKey = try r.string() }
        if let r = try reader.optional("failureRate") { options.failureRate = try r.fraction() }
        if let r = try reader.optional("timeoutRate") { options.timeoutRate = try r.fraction() }
        if let r = try reader.optional("busyRate") { options.busyRate = try r.fraction() }
        if let r = try reader.optional("cancelRaceRate") { options.cancelRaceRate = try r.fraction() }
        if let r = try reader.optional("stompErrorRate") { options.stompErrorRate = try r.fraction() }
        if let r = try reader.optional("socketDropRate") { options.socketDropRate = try r.fraction() }
        if let r = try reader.optional("rejectRate") { options.rejectRate = try r.fraction() }
        if let r = try reader.optional("verifyEncodedFields") { options.verifyEncodedFields = try r.bool() }
        if let r = try reader.optional("skipStatuses") {
            let names = GCCSStatus.verification.map(\.rawValue)
            options.skipStatuses = Set(
                try r.elements().map { element throws(ProfileError) in GCCSStatus(rawValue: try element.oneOf(names))! })
        }
        if let r = try reader.optional("repeatStatuses") { options.repeatStatuses = try r.bool() }
        if let r = try reader.optional("secondaryAuthRate") { options.secondaryAuthRate = try r.fraction() }
        return options
    }
}
