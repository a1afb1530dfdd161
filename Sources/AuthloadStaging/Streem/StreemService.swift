import AuthloadCore
import AuthloadWire

/// The server side of Streem identity (docs/protocols.md, Streem; the paths are authload's own): invitation redemption,
/// OpenID with a test-only password grant, the access-token → Streem-token exchange, a refresh, an
/// authorized call, and logout.
///
/// Streem tokens are HS256 JWTs with the claims of §D.2 (`iss`, `sub`, `aud`, `iat`, `exp`,
/// `session_exp`, `name`). `GET /v1/me` answers 401 once `exp` has passed; a refresh renews `exp` up to
/// `session_exp`, after which only a full login helps. Time comes from the injected wall clock, so a
/// virtual-time run sees exact expiries.
public final class StreemService: Sendable {
    public struct Options: Sendable, Equatable {
        /// How long a Streem token is valid (its `exp`).
        public var tokenLifetime: Duration = .seconds(300)
        /// How long a session may be refreshed (its `session_exp`).
        public var sessionLifetime: Duration = .seconds(4 * 3600)
        public var accessTokenLifetime: Duration = .seconds(3600)
        /// Latency of every call, and of the token endpoints (token, exchange, refresh) when set apart.
        public var latency = LatencyModel.none
        public var tokenLatency: LatencyModel?
        public var password = "demo-password"
        public var companyCode = "acme"
        /// A used refresh token is refused (`invalid_grant`); each refresh hands out a new one.
        public var rotateRefreshTokens = true
        /// An invitation code can be redeemed once (410 after).
        public var singleUseInvitations = false
        /// Share of logins and refreshes refused as for a revoked user.
        public var revokedRate = 0.0
        /// How far past `exp` a token is still accepted (clock skew).
        public var leeway: Duration = .zero
        /// The OpenID client the company's configuration names. Grants from any other client are refused, and a
        /// refresh token is bound to the client it was issued to (RFC 6749 §6).
        public var clientID = "streem-acme-app"
        /// The first this many refresh-token grants are refused with `invalid_grant`, as a server that revoked
        /// the grant would: a client must log in again (docs/protocols.md, Streem).
        public var refuseFirstRefreshes = 0

        public init() {}
    }

    public let options: Options
    private let now: WallClock
    private let key: HMACKey
    private let random: Locked<SplitMix64>
    /// Subjects by OpenID access token; expired tokens are swept out as new ones come.
    private let accessTokens = Locked(ExpiringTable<String>(capacity: tableCapacity))
    /// Subject and client by refresh token. A refresh token lives as long as a session it starts
    /// (``Options/sessionLifetime``): kept without end, the one every login leaves unused grew a day-long soak by
    /// a quarter of a million entries.
    private let refreshTokens = Locked(ExpiringTable<RefreshGrant>(capacity: tableCapacity))
    /// Tokens whose signature checked out, so that the calls a session makes with one verify it once.
    private let verified = Locked(VerifiedStreemTokens(slots: 4_096))
    private let redeemed = Locked<Set<String>>([])
    private let tally = Locked(Counts())
    /// Bounds every table: a soak of millions of logins must not grow them without end.
    static let tableCapacity = 1_000_000

    public init(options: Options, seed: UInt64 = 13, now: @escaping WallClock = WallTime.now) {
        self.options = options
        self.now = now
        key = HMACKey(Digest.secureRandomBytes(count: 32))
        random = Locked(SplitMix64(seed: seed))
    }

    static let audience = "https://api.prod-us.streem.cloud/"

    private struct RefreshGrant {
        var subject: String
        var client: String
    }

    /// What the service granted and refused, as a server's own logs would count it.
    public struct Counts: Sendable, Equatable {
        /// Refresh-token grants answered with new tokens.
        public var refreshGrants = 0
        /// Refresh-token grants refused (`invalid_grant`).
        public var refusedRefreshes = 0
        /// Answers 401 to a Streem token (calls, refreshes, logouts).
        public var unauthorized = 0
    }

    public var counts: Counts { tally.withLock { $0 } }

    // MARK: Routing

    /// Answers the request if it is for this service, nil otherwise.
    ///
    /// - Parameter path: the request's path, which the server has found already.
    func respond(to request: HTTPRequest, path: Substring) -> ServiceReply? {
        guard Route.mayMatch(path) else { return nil }
        let response: HTTPResponse
        var tokenEndpoint = false
        // Matched in place, segment by segment: every request the server answers for another service (all of Okta's)
        // comes through here, and splitting each path into strings first cost every one of them an array and its
        // strings.
        var wildcard: Substring = ""
        /// Whether the request is `method` on `pattern`; `wildcard` is the segment its `*` matched.
        func route(_ method: String, _ pattern: Route) -> Bool {
            request.method == method && pattern.matches(path, wildcard: &wildcard)
        }
        if route("POST", .redeem) {
            response = redeem(code: String(wildcard))
        } else if route("GET", .openIDConfiguration) {
            response = openIDConfiguration(company: String(wildcard))
        } else if route("POST", .token) {
            response = token(FormURLEncoding.decode(request.body))
            tokenEndpoint = true
        } else if route("POST", .exchange) {
            response = withBearer(of: request) { exchange($0) }
            tokenEndpoint = true
        } else if route("POST", .refresh) {
            response = withBearer(of: request) { refresh($0) }
            tokenEndpoint = true
        } else if route("GET", .me) {
            response = withBearer(of: request) { me($0) }
        } else if route("POST", .logout) {
            response = withBearer(of: request) { logout($0) }
        } else {
            return nil
        }
        let latency = random.withLock { random in
            (tokenEndpoint ? options.tokenLatency ?? options.latency : options.latency).sample(using: &random)
        }
        return ServiceReply(response, after: latency)
    }

    /// A path pattern, split once: `*` matches one segment.
    private struct Route {
        /// The pattern's segments as bytes, nil for the `*`.
        let segments: [[UInt8]?]

        init(_ pattern: String) { segments = pattern.split(separator: "/").map { $0 == "*" ? nil : Array($0.utf8) } }

        /// Whether `path`'s non-empty segments are the pattern's, as splitting it on `/` would find them; sets
        /// `wildcard` to the segment a `*` matched.
        ///
        /// Compared as bytes, in the path's own storage: a pattern's segments are lowercase ASCII, which no other text is
        /// canonically equal to. Walked through `Substring`'s UTF-8 view, the generic `firstIndex` and `elementsEqual`
        /// were most of Streem's routing, which every request to it goes through.
        func matches(_ path: Substring, wildcard: inout Substring) -> Bool {
            var path = path
            let matched = path.withUTF8 { bytes -> Range<Int>?? in
                var start = 0
                var star: Range<Int>?
                for segment in segments {
                    let found = Route.segment(in: bytes, from: start)
                    guard !found.isEmpty else { return nil }
                    if let segment {
                        let bytes = UnsafeBufferPointer(rebasing: bytes[found])
                        guard segment.withUnsafeBufferPointer({ bytes.hasSameBytes(as: $0) }) else { return nil }
                    } else {
                        star = found
                    }
                    start = found.upperBound
                }
                return Route.segment(in: bytes, from: start).isEmpty ? .some(star) : nil
            }
            guard let matched else { return false }
            if let star = matched {
                let utf8 = path.utf8
                wildcard =
                    path[utf8.index(utf8.startIndex, offsetBy: star.lowerBound)..<utf8.index(utf8.startIndex, offsetBy: star.upperBound)]
            }
            return true
        }

        /// The next segment of `bytes` from `start` on: past any slashes, up to the next slash or the end; empty when only
        /// slashes are left.
        private static func segment(in bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Range<Int> {
            let slash = UInt8(ascii: "/")
            var start = start
            while start < bytes.count, bytes[start] == slash { start += 1 }
            var end = start
            while end < bytes.count, bytes[end] != slash { end += 1 }
            return start..<end
        }

        /// Whether `path`'s first segment is one a route starts with: most paths are another service's, and this says
        /// so in one look.
        static func mayMatch(_ path: Substring) -> Bool {
            var path = path
            return path.withUTF8 { bytes in
                let first = UnsafeBufferPointer(rebasing: bytes[segment(in: bytes, from: 0)])
                return first.isUTF8(of: "v1") || first.isUTF8(of: "openid")
            }
        }

        static let redeem = Route("v1/invitations/*/redeem")
        static let openIDConfiguration = Route("v1/companies/*/openid-configuration")
        static let token = Route("openid/token")
        static let exchange = Route("v1/streem-tokens")
        static let refresh = Route("v1/streem-tokens/refresh")
        static let me = Route("v1/me")
        static let logout = Route("v1/sessions/logout")
    }

    // MARK: Endpoints

    private func redeem(code: String) -> HTTPResponse {
        // Nine ASCII digits, checked as bytes: the only ASCII characters that are numbers are the digits, each one byte.
        guard code.utf8.count == 9, code.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else {
            return .json(status: 400, ["error": "invitation codes are 9 digits"])
        }
        // Ours, not Streem's: codes starting with 9 stand for unknown invitations, so a test can ask for a 404.
        guard !code.hasPrefix("9") else { return .json(status: 404, ["error": "unknown invitation"]) }
        if options.singleUseInvitations {
            let fresh = redeemed.withLock { redeemed in
                if redeemed.count >= Self.tableCapacity { redeemed.removeAll() }
                return redeemed.insert(code).inserted
            }
            guard fresh else { return .json(status: 410, ["error": "invitation already redeemed"]) }
        }
        let subject = "invitee-\(code)"
        return .json(
            status: 200,
            [
                "streem_token": .string(mint(subject: subject, sessionExpires: now() + options.sessionLifetime)),
                "invitation": [
                    "reference_id": .string("ref-\(code)"), "user": ["uid": .string(subject), "display_name": "Invitee"],
                    "company": ["code": .string(options.companyCode), "name": "Acme Field Service"]
                ]
            ])
    }

    private func openIDConfiguration(company: String) -> HTTPResponse {
        guard company == options.companyCode else { return .json(status: 404, ["error": "unknown company"]) }
        return .json(
            status: 200,
            [
                "client_id": .string(options.clientID), "authorization_endpoint": "/openid/authorize",
                "token_endpoint": "/openid/token", "end_session_endpoint": "/openid/logout"
            ])
    }

    private func token(_ form: [(String, String)]) -> HTTPResponse {
        let field = { (name: String) in form.first { $0.0 == name }?.1 }
        let client = field("client_id") ?? ""
        guard client == options.clientID else {
            return .json(status: 401, ["error": "invalid_client", "error_description": "unknown client"])
        }
        let subject: String
        let issued = now()
        switch field("grant_type") {
        case "password":
            guard let username = field("username"), field("password") == options.password, !revoked() else {
                return .json(status: 400, ["error": "invalid_grant", "error_description": "bad credentials"])
            }
            subject = username
        case "refresh_token":
            let refused = tally.withLock { $0.refusedRefreshes + $0.refreshGrants < options.refuseFirstRefreshes }
            guard !refused, let old = field("refresh_token"), !revoked(),
                let grant = refreshTokens.withLock({ tokens in
                    tokens.value(old, now: issued).map { grant in
                        if options.rotateRefreshTokens { tokens.remove(old) }
                        return grant
                    }
                }),
                grant.client == client
            else {
                tally.withLock { $0.refusedRefreshes += 1 }
                return .json(
                    status: 400,
                    ["error": "invalid_grant", "error_description": "refresh token is invalid, was used, or belongs to another client"])
            }
            tally.withLock { $0.refreshGrants += 1 }
            subject = grant.subject
        default:
            return .json(status: 400, ["error": "unsupported_grant_type"])
        }
        let (access, refresh) = random.withLock { ($0.hex(40), $0.hex(40)) }
        let expires = issued + options.accessTokenLifetime
        accessTokens.withLock { $0.set(access, subject, expiresAt: expires, now: issued) }
        refreshTokens.withLock {
            $0.set(refresh, RefreshGrant(subject: subject, client: client), expiresAt: issued + options.sessionLifetime, now: issued)
        }
        return .json(
            status: 200,
            [
                "access_token": .string(access), "refresh_token": .string(refresh), "token_type": "Bearer",
                "expires_in": .number(Double(options.accessTokenLifetime.microseconds / 1_000_000)),
                "id_token": .string(
                    JWT.signHS256(
                        [
                            "sub": .string(subject), "name": .string(subject),
                            "custom:streem_company_code": .string(options.companyCode)
                        ], key: key))
            ])
    }

    private func exchange(_ bearer: UnsafeBufferPointer<UInt8>?) -> HTTPResponse {
        let now = now()
        guard let bearer = bearer.map({ String(decoding: $0, as: UTF8.self) }),
            let subject = accessTokens.withLock({ $0.value(bearer, now: now) })
        else {
            return unauthorized("access token is invalid or expired")
        }
        return .json(status: 200, ["streem_token": .string(mint(subject: subject, sessionExpires: now + options.sessionLifetime))])
    }

    /// Renews a Streem token within its session (ours: the endpoint and its rules are not public): the token may have expired, but its signature must
    /// hold and its `session_exp` must be ahead.
    private func refresh(_ bearer: UnsafeBufferPointer<UInt8>?) -> HTTPResponse {
        guard let bearer, let token = verifiedToken(bearer), let subject = token.subject?.stringValue,
            let sessionExpires = token.sessionExpires
        else {
            return unauthorized("not a Streem token")
        }
        guard sessionExpires > now() else { return unauthorized("session expired") }
        guard !revoked() else { return unauthorized("user revoked") }
        return .json(status: 200, ["streem_token": .string(mint(subject: subject, sessionExpires: sessionExpires))])
    }

    private func me(_ bearer: UnsafeBufferPointer<UInt8>?) -> HTTPResponse {
        guard let token = valid(bearer) else { return unauthorized("token is invalid or expired") }
        return HTTPResponse(status: 200, headers: HTTPResponse.jsonHeaders, body: Self.meBody(token))
    }

    /// The answer to `GET /v1/me`, `{"sub","name"}`, written as bytes: byte for byte what serializing the object writes
    /// (each value through the same writer), without building it for every call, the service's most frequent request.
    static func meBody(_ token: VerifiedStreemToken) -> [UInt8] {
        var body = JSONObjectWriter(reservingCapacity: 96)
        body.add("sub", token.subject ?? .null)
        body.add("name", token.name ?? .null)
        return body.finish()
    }

    private func logout(_ bearer: UnsafeBufferPointer<UInt8>?) -> HTTPResponse {
        guard valid(bearer) != nil else { return unauthorized("token is invalid or expired") }
        return HTTPResponse(status: 204)
    }

    // MARK: Tokens

    private func mint(subject: String, sessionExpires: Duration) -> String {
        let issued = now()
        let claims = StreemTokenClaims(
            subject: subject, audience: Self.audience, issued: issued, expires: min(issued + options.tokenLifetime, sessionExpires),
            sessionExpires: sessionExpires)
        let token = JWT.signHS256(payload: claims.serialized(), key: key)
        // What it signed, it knows: the calls made with the token need not verify it again.
        verified.withLock { $0.remember(claims.verified(token: token)) }
        return token
    }

    /// A token that verifies, is for us, and has not expired (within the leeway).
    private func valid(_ bearer: UnsafeBufferPointer<UInt8>?) -> VerifiedStreemToken? {
        let time = now()
        guard let bearer, let token = verifiedToken(bearer), token.forUs, let expires = token.expires,
            expires + options.leeway > time
        else { return nil }
        return token
    }

    /// `bearer` read if its signature checks out, remembered or verified now.
    private func verifiedToken(_ bearer: UnsafeBufferPointer<UInt8>) -> VerifiedStreemToken? {
        if let known = verified.withLock({ $0.token(bearer) }) { return known }
        let bearer = String(decoding: bearer, as: UTF8.self)
        guard let claims = JWT.verifyHS256(bearer, key: key) else { return nil }
        let token = VerifiedStreemToken(token: bearer, claims: claims, audience: Self.audience)
        verified.withLock { $0.remember(token) }
        return token
    }

    /// Calls `body` with the token of the request's `Bearer` authorization, as bytes of the header (nil without one):
    /// a call's token is looked up in the memo, and made a `String` only when it must be verified or kept.
    private func withBearer(of request: HTTPRequest, _ body: (UnsafeBufferPointer<UInt8>?) -> HTTPResponse) -> HTTPResponse {
        request.headers.withFirstValue(of: "Authorization") { value in
            let prefix = "Bearer ".utf8
            guard let value, value.starts(with: prefix) else { return body(nil) }
            return body(UnsafeBufferPointer(rebasing: value[prefix.count...]))
        }
    }

    private func unauthorized(_ why: String) -> HTTPResponse {
        tally.withLock { $0.unauthorized += 1 }
        var response = HTTPResponse.json(status: 401, ["error": "invalid_token", "error_description": .string(why)])
        response.headers.add("WWW-Authenticate", #"Bearer error="invalid_token""#)
        return response
    }

    private func revoked() -> Bool { random.withLock { $0.chance(options.revokedRate) } }
}
