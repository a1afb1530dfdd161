import AuthloadCore

extension StreemService.Options {
    /// Reads `target.embedded.streem`:
    ///
    /// ```json
    /// {"tokenLifetime": "30s", "sessionLifetime": "4h", "latency": {"fixed": "5ms"}, "tokenLatency": {"fixed": "50ms"},
    ///  "password": "demo-password", "companyCode": "acme", "rotateRefreshTokens": true, "singleUseInvitations": false,
    ///  "revokedRate": 0, "leeway": "0s",
    ///  "clientID": "streem-acme-app", "refuseFirstRefreshes": 0}
    /// ```
    public static func read(_ reader: ProfileReader) throws(ProfileError) -> Self {
        try reader.rejectUnknownKeys(allowed: [
            "tokenLifetime", "sessionLifetime", "accessTokenLifetime", "latency", "tokenLatency", "password", "companyCode",
            "rotateRefreshTokens", "singleUseInvitations", "revokedRate", "leeway", "clientID", "refuseFirstRefreshes"
        ])
        var options = Self()
        if let r = try reader.optional("tokenLifetime") { options.tokenLifetime = try r.positiveDuration() }
        if let r = try reader.optional("sessionLifetime") { options.sessionLifetime = try r.positiveDuration() }
        if let r = try reader.optional("accessTokenLifetime") { options.accessTokenLifetime = try r.positiveDuration() }
        if let r = try reader.optional("latency") { options.latency = try LatencyModel.read(r) }
        if let r = try reader.optional("tokenLatency") { options.tokenLatency = try LatencyModel.read(r) }
        if let r = try reader.optional("password") { options.password = try r.string() }
        if let r = try reader.optional("companyCode") { options.companyCode = try r.string() }
        if let r = try reader.optional("rotateRefreshTokens") { options.rotateRefreshTokens = try r.bool() }
        if let r = try reader.optional("singleUseInvitations") { options.singleUseInvitations = try r.bool() }
        if let r = try reader.optional("revokedRate") { options.revokedRate = try r.fraction() }
        if let r = try reader.optional("leeway") { options.leeway = try r.duration() }
        if let r = try reader.optional("clientID") { options.clientID = try r.string() }
        if let r = try reader.optional("refuseFirstRefreshes") { options.refuseFirstRefreshes = try r.nonNegativeInt() }
        guard options.sessionLifetime >= options.tokenLifetime else {
            throw ProfileError(
                reader.path.isEmpty ? "sessionLifetime" : "\(reader.path).sessionLifetime",
                "must not be shorter than tokenLifetime (\(DurationText.format(options.tokenLifetime)))")
        }
        return options
    }
}
