import AuthloadCore
import AuthloadWire

/// Reads an `okta-idx-mfa` entry of `flows`; see the README for each option.
extension OktaIDXFlow {
    static func read(_ reader: ProfileReader, basePath: String) throws(ProfileError) -> OktaIDXFlow {
        try reader.rejectUnknownKeys(allowed: [
            "name", "kind", "weight", "issuerPath", "clientId", "redirectUri", "scope", "factor", "factors", "passcode",
            "restartOnExpiry", "maxRestarts", "maxRetries"
        ])
        var options = Options()
        options.paths = try IDXPaths.read(reader)
        if let r = try reader.optional("clientId") { options.clientID = try r.nonEmptyString() }
        if let r = try reader.optional("redirectUri") { options.redirectURI = try r.nonEmptyString() }
        if let r = try reader.optional("scope") { options.scope = try r.nonEmptyString() }
        options.factors = try factors(reader) ?? options.factors
        if let r = try reader.optional("passcode") { options.passcode = try r.nonEmptyString() }
        if let r = try reader.optional("restartOnExpiry") { options.restartOnExpiry = try r.bool() }
        if let r = try reader.optional("maxRestarts") { options.maxRestarts = try r.count(atMost: 10) }
        if let r = try reader.optional("maxRetries") { options.maxRetries = try r.count(atMost: 20) }
        return OktaIDXFlow(options: options, basePath: basePath)
    }

    /// `factors` (the preference list) or `factor` (its one-item form); nil when the profile names neither.
    private static func factors(_ reader: ProfileReader) throws(ProfileError) -> [Factor]? {
        let names = Factor.allCases.map(\.rawValue)
        let one = try reader.optional("factor")
        guard let list = try reader.optional("factors") else {
            return try one.map { r throws(ProfileError) in [Factor(rawValue: try r.oneOf(names))!] }
        }
        if one != nil { throw list.error("give either factor or factors, not both") }
        let factors = try list.elements().map { element throws(ProfileError) in Factor(rawValue: try element.oneOf(names))! }
        guard !factors.isEmpty else { throw list.error("must name at least one of: \(names.joined(separator: ", "))") }
        guard Set(factors).count == factors.count else { throw list.error("must not name a factor twice") }
        return factors
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
