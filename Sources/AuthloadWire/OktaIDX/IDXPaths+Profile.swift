import AuthloadCore

extension IDXPaths {
    /// Reads the optional `issuerPath` of an Okta section (the flow's or the staging service's).
    public static func read(_ reader: ProfileReader) throws(ProfileError) -> IDXPaths {
        var paths = IDXPaths()
        if let r = try reader.optional("issuerPath") {
            paths.issuerPath = try r.string()
            guard paths.issuerPath.isEmpty || (paths.issuerPath.hasPrefix("/") && !paths.issuerPath.hasSuffix("/")) else {
                throw r.error("must be empty or start with '/' and not end with one, e.g. \"/oauth2/default\"")
            }
        }
        return paths
    }
}
