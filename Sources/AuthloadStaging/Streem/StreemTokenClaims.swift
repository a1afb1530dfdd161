import AuthloadCore

/// The claims of a Streem token the service mints (docs/protocols.md, Streem; §D.2), written straight to JSON bytes.
///
/// A service mints a token at every login and refresh: building the claims as a `JSONValue` object, then serializing
/// it, then reading back from it what the memo of verified tokens keeps, cost more than signing them did. The bytes
/// are those that serializing the same object writes, members in the same order, so the tokens on the wire do not
/// change.
struct StreemTokenClaims {
    static let issuer = "streem:api:authload"

    var subject: String
    var audience: String
    var issued: Duration
    var expires: Duration
    var sessionExpires: Duration

    /// A time as a claim carries it: seconds on the wall clock, to the millisecond.
    static func seconds(_ time: Duration) -> Double { (time.seconds * 1000).rounded() / 1000 }

    /// The compact JSON object `{"iss","sub","aud","iat","exp","session_exp","name"}`.
    func serialized() -> [UInt8] {
        var claims = JSONObjectWriter(reservingCapacity: 160 + 2 * subject.utf8.count + audience.utf8.count)
        claims.add("iss", Self.issuer)
        claims.add("sub", subject)
        claims.add("aud", audience)
        claims.add("iat", .number(Self.seconds(issued)))
        claims.add("exp", .number(Self.seconds(expires)))
        claims.add("session_exp", .number(Self.seconds(sessionExpires)))
        claims.add("name", subject)
        return claims.finish()
    }

    /// What a call reads of `token`, signed over these claims: what verifying it would find, for the service's own
    /// audience.
    func verified(token: String) -> VerifiedStreemToken {
        VerifiedStreemToken(
            token: token, subject: .string(subject), name: .string(subject), forUs: true,
            expires: .seconds(Self.seconds(expires)), sessionExpires: .seconds(Self.seconds(sessionExpires)))
    }
}
