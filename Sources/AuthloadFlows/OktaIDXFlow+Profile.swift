import AuthloadCore
import AuthloadWire

/// Reads an `okta-idx-mfa` entry of `flows`; see the README for each option.
extension OktaIDXFlow {
    static func read(_ reader: ProfileReader, basePath: String) throws(ProfileError) -> OktaIDXFlow {
        try reader.rejectUnknownKeys(allowed: [
            "name", "kind", "weight", "issuerPath", "clientId", "redirectUri", "scope", "factor", "passcode",
            "restartOnExpiry", "maxRestarts", "maxRetries"
        ])
        var options = Options()
        options.paths = try IDXPaths.read(reader)
        if let r = try reader.optional("clientId") { options.clientID = try r.nonEmptyString() }
        if let r = try reader.optional("redirectUri") { options.redirectURI = try r.nonEmptyString() }
        if let r = try reader.optional("scope") { options.scope = try r.nonEmptyString() }
        if let r = try reader.optional("factor") { options.factor = Factor(rawValue: try r.oneOf(Factor.allCases.map(\.rawValue)))! }
        if let r = try reader.optional("passcode") { options.passcode = try r.nonEmptyString() }
        if let r = try reader.optional("restartOnExpiry") { options.restartOnExpiry = try r.bool() }
        if let r = try reader.optional("maxRestarts") { options.maxRestarts = try r.count(atMost: 10) }
        if let r = try reader.optional("maxRetries") { options.maxRetries = try r.count(atMost: 20) }
        return OktaIDXFlow(options: options, basePath: basePath)
    }
}

extension ProfileReader {
    func nonEmptyString() throws(ProfileError) -> String {
        let text = try string()
        guard !text.isEmpty else { throw error("must not be empty") }
        return text
    }

    /// A whole number from 0 to `limit`: how many times something may happen again.
    func count(atMost limit: Int) throws(ProfileError) -> Int {
        let value = try int()
        guard (0...limit).contains(value) else { throw error("must be a whole number from 0 to \(limit), found \(value)") }
        return value
    }
}
