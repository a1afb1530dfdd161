import AuthloadCore

extension StreemSessionFlow {
    /// Reads a `streem-session` entry of `flows`; see the README for each option.
    static func read(_ reader: ProfileReader, basePath: String) throws(ProfileError) -> StreemSessionFlow {
        try reader.rejectUnknownKeys(allowed: [
            "name", "kind", "weight", "login", "companyCode", "hold", "callInterval", "callPath", "refresh",
            "refreshLead", "refreshJitter", "refreshPath", "logout", "redeemPath", "configurationPath", "exchangePath", "logoutPath"
        ])
        var options = Options()
        if let r = try reader.optional("login") { options.login = Login(rawValue: try r.oneOf(Login.allCases.map(\.rawValue)))! }
        if let r = try reader.optional("companyCode") { options.companyCode = try r.string() }
        if let r = try reader.optional("hold") { options.hold = try Profile.thinkTime(r) }
        if let r = try reader.optional("callInterval") { options.callInterval = try r.positiveDuration() }
        if let r = try reader.optional("callPath") {
            options.callPath = try r.string()
            guard options.callPath.hasPrefix("/") else { throw r.error("must start with '/'") }
        }
        if let r = try reader.optional("refresh") { options.refresh = Refresh(rawValue: try r.oneOf(Refresh.allCases.map(\.rawValue)))! }
        if let r = try reader.optional("refreshLead") { options.refreshLead = try r.duration() }
        if let r = try reader.optional("refreshJitter") { options.refreshJitter = try r.duration() }
        if let r = try reader.optional("refreshPath") {
            options.refreshPath = try r.string()
            guard options.refreshPath.hasPrefix("/") else { throw r.error("must start with '/'") }
        }
        if let r = try reader.optional("logout") { options.logout = try r.bool() }
        func path(_ key: String, holding placeholder: (text: String, what: String)? = nil) throws(ProfileError) -> String? {
            guard let r = try reader.optional(key) else { return nil }
            let path = try r.string()
            guard path.hasPrefix("/") else { throw r.error("must start with '/'") }
            if let placeholder, !path.contains(placeholder.text) {
                throw r.error("must hold \(placeholder.text), where the \(placeholder.what) goes")
            }
            return path
        }
        if let p = try path("redeemPath", holding: ("{code}", "invitation code")) { options.redeemPath = p }
        if let p = try path("configurationPath", holding: ("{company}", "company code")) { options.configurationPath = p }
        if let p = try path("exchangePath") { options.exchangePath = p }
        if let p = try path("logoutPath") { options.logoutPath = p }
        return StreemSessionFlow(options: options, basePath: basePath)
    }
}
