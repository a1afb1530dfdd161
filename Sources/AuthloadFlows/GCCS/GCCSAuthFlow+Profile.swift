import AuthloadCore
import AuthloadWire

/// Reads a `gccs-auth` entry of `flows`; see the README for each option.
extension GCCSAuthFlow {
    static func read(_ reader: ProfileReader, basePath: String) throws(ProfileError) -> GCCSAuthFlow {
        try reader.rejectUnknownKeys(allowed: [
            "name", "kind", "weight", "apiPrefix", "socketPath", "queue", "clientKey", "lang", "cancelRatio", "cancelAfter",
            "subscribeReceipt", "heartBeat", "subprotocols", "secondaryCertification"
        ])
        var options = Options()
        options.paths = try GCCSPaths.read(reader)
        if let r = try reader.optional("clientKey") { options.clientKey = try r.string() }
        if let r = try reader.optional("lang") { options.lang = try r.string() }
        if let r = try reader.optional("cancelRatio") { options.cancelRatio = try r.fraction() }
        if let r = try reader.optional("cancelAfter") {
            let names = GCCSStatus.verification.map(\.rawValue)
            options.cancelAfter = GCCSStatus(rawValue: try r.oneOf(names))!
        }
        if let r = try reader.optional("subscribeReceipt") { options.subscribeReceipt = try r.bool() }
        if let r = try reader.optional("heartBeat") {
            let text = try r.string()
            guard let beat = StompHeartBeat(text) else { throw r.error("must be \"cx,cy\" in milliseconds, e.g. \"10000,10000\"") }
            options.heartBeat = beat
        }
        if let r = try reader.optional("subprotocols") {
            options.subprotocols = try r.elements().map { element throws(ProfileError) in try element.string() }
        }
        if let r = try reader.optional("secondaryCertification") {
            if let value = r.value.boolValue {
                options.secondaryCertification = .always(value)
            } else {
                guard r.value.stringValue == "auto" else { throw r.error("must be \"auto\", true or false") }
                options.secondaryCertification = .auto
            }
        }
        return GCCSAuthFlow(options: options, basePath: basePath)
    }
}
