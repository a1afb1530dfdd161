import AuthloadCore

extension GCCSPaths {
    /// Reads the optional `apiPrefix`, `socketPath` and `queue` of a GCCS section (the flow's or the staging service's).
    public static func read(_ reader: ProfileReader) throws(ProfileError) -> GCCSPaths {
        var paths = GCCSPaths()
        if let r = try reader.optional("apiPrefix") {
            paths.apiPrefix = try r.string()
            guard paths.apiPrefix.isEmpty || (paths.apiPrefix.hasPrefix("/") && !paths.apiPrefix.hasSuffix("/")) else {
                throw r.error("must be empty or start with '/' and not end with one, e.g. \"/api/v3\"")
            }
        }
        if let r = try reader.optional("socketPath") {
            paths.socket = try r.string()
            guard paths.socket.hasPrefix("/") else { throw r.error("must start with '/'") }
        }
        if let r = try reader.optional("queue") {
            paths.queue = try r.string()
            guard paths.queue.hasPrefix("/") else { throw r.error("must start with '/', e.g. \"/user/queue\"") }
        }
        return paths
    }
}
