import AuthloadCore

/// Builds the flow a profile entry names, reading and checking that flow's own options.
public enum FlowCatalog {
    /// Every kind `flows[].kind` may name.
    public static let kinds = ["fcsdk-login", "okta-idx-mfa", "gccs-auth", "streem-session", "http"]

    public static func make(_ plan: FlowPlan, target basePath: String) throws(ProfileError) -> any Flow {
        let options = plan.options
        switch plan.kind {
        case "fcsdk-login":
            try options.rejectUnknownKeys(allowed: ["name", "kind", "weight", "loginPath", "logoutPath", "cookies", "hold"])
            var flowOptions = FCSDKLoginFlow.Options()
            if let path = try options.optional("loginPath") {
                flowOptions.loginPath = try path.string()
                guard flowOptions.loginPath.hasPrefix("/") else { throw path.error("must start with '/'") }
            }
            if let path = try options.optional("logoutPath") {
                let text = try path.string()
                guard text.hasPrefix("/"), text.contains("{sessionid}") else {
                    throw path.error("must start with '/' and hold {sessionid}, e.g. \"/csdk-sample/SDK/login/id/{sessionid}\"")
                }
                flowOptions.logoutPath = text
            }
            if let cookies = try options.optional("cookies") {
                flowOptions.clearCookies = try cookies.oneOf(["clear", "keep"]) == "clear"
            }
            if let hold = try options.optional("hold") { flowOptions.hold = try Profile.thinkTime(hold) }
            return FCSDKLoginFlow(options: flowOptions, basePath: basePath)
        case "gccs-auth":
            return try GCCSAuthFlow.read(options, basePath: basePath)
        case "streem-session":
            return try StreemSessionFlow.read(options, basePath: basePath)
        case "http":
            return try HTTPRequestFlow.read(options, basePath: basePath)
        case "okta-idx-mfa":
            return try OktaIDXFlow.read(options, basePath: basePath)
        default:
            let kind = try options.required("kind")
            throw kind.error("\"\(plan.kind)\" is not a flow kind (known kinds: \(kinds.joined(separator: ", ")))")
        }
    }
}
