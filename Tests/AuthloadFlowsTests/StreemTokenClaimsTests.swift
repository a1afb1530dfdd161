import AuthloadCore
import AuthloadWire
import Testing

@testable import AuthloadStaging

/// The claims the Streem service mints, written as bytes rather than built as a JSON value.
@Suite("Streem token claims")
struct StreemTokenClaimsTests {
    static let claims = [
        StreemTokenClaims(
            subject: "invitee-123456789", audience: StreemService.audience, issued: .seconds(1_700_000_000),
            expires: .seconds(1_700_000_120), sessionExpires: .seconds(1_700_014_400)),
        // Fractions of a millisecond rounded away, a subject that needs escaping, times that are not whole seconds.
        StreemTokenClaims(
            subject: "user \"7\"\\\u{1}@example.com", audience: "https://other/", issued: .milliseconds(1_700_000_000_123),
            expires: .microseconds(1_700_000_120_123_456), sessionExpires: .nanoseconds(1_700_014_400_999_999_999))
    ]

    /// The claims as the service built them before: a JSON object, members in this order.
    static func asValue(_ claims: StreemTokenClaims) -> JSONValue {
        func seconds(_ d: Duration) -> JSONValue { .number((d.seconds * 1000).rounded() / 1000) }
        return [
            "iss": "streem:api:authload", "sub": .string(claims.subject), "aud": .string(claims.audience),
            "iat": seconds(claims.issued), "exp": seconds(claims.expires), "session_exp": seconds(claims.sessionExpires),
            "name": .string(claims.subject)
        ]
    }

    @Test("the bytes are those of the same claims serialized as a JSON object", arguments: claims)
    func bytes(claims: StreemTokenClaims) throws {
        let bytes = claims.serialized()
        #expect(bytes == Self.asValue(claims).serialized())
        #expect(try JSONValue.parse(bytes) == Self.asValue(claims))
    }

    @Test("what the memo keeps for a minted token is what verifying the token reads from it", arguments: claims)
    func verified(claims: StreemTokenClaims) throws {
        let key = Array("a key of thirty-two bytes, as Streem's is".utf8)
        let token = JWT.signHS256(payload: claims.serialized(), key: key)
        let read = try #require(JWT.verifyHS256(token, key: key))
        #expect(claims.verified(token: token) == VerifiedStreemToken(token: token, claims: read, audience: claims.audience))
        #expect(VerifiedStreemToken(token: token, claims: read, audience: "https://another/").forUs == false)
    }
}

/// The memo of verified tokens, its pairs of slots filled by hand.
@Suite("Streem verified-token memo")
struct VerifiedStreemTokensTests {
    static func entry(_ token: String) -> VerifiedStreemToken {
        VerifiedStreemToken(token: token, subject: nil, name: nil, forUs: true, expires: nil, sessionExpires: nil)
    }

    @Test("two tokens on one pair are both remembered; a third forgets the older of them")
    func pairs() {
        // Two slots are one pair: every token falls on it.
        var memo = VerifiedStreemTokens(slots: 2)
        let (a, b, c) = ("h.p.signature-a", "h.p.signature-b", "h.p.signature-c")
        memo.remember(Self.entry(a))
        memo.remember(Self.entry(b))
        #expect(memo.token(a[...])?.token == a)
        #expect(memo.token(b[...])?.token == b)
        memo.remember(Self.entry(c))
        #expect(memo.token(a[...]) == nil)
        #expect(memo.token(b[...])?.token == b)
        #expect(memo.token(c[...])?.token == c)
        // The newest again does not push the other out.
        memo.remember(Self.entry(c))
        #expect(memo.token(b[...])?.token == b)
        #expect(memo.token("h.p.signature-b2"[...]) == nil, "only that very token is found")
    }

    @Test("a token is found by its bytes, from a slice of a longer header too; one byte off, shorter or longer is not")
    func bytes() {
        var memo = VerifiedStreemTokens(slots: 2)
        let token = "h.p.signature-\u{E9}"
        memo.remember(Self.entry(token))
        let header = "Bearer " + token
        #expect(memo.token(header.dropFirst(7))?.token == token)
        #expect(memo.token("h.p.signaturE-\u{E9}"[...]) == nil)
        #expect(memo.token("h.p.signature-"[...]) == nil)
        #expect(memo.token((token + "x")[...]) == nil)
        #expect(memo.token(""[...]) == nil)
        // Canonically equal text is not the same token: the signature covers the bytes.
        #expect(memo.token("h.p.signature-e\u{301}"[...]) == nil)
        // Remembering the same token again leaves the other of the pair.
        memo.remember(Self.entry("h.p.other"))
        memo.remember(Self.entry(token))
        memo.remember(Self.entry(String(header.dropFirst(7))))
        #expect(memo.token("h.p.other"[...])?.token == "h.p.other")
    }

    @Test("it remembers at most its slots' worth of tokens", arguments: [1, 2, 3, 64])
    func bounded(slots: Int) {
        var memo = VerifiedStreemTokens(slots: slots)
        let tokens = (0..<200).map { "h.p.signature-\($0)" }
        for token in tokens { memo.remember(Self.entry(token)) }
        let found = tokens.filter { memo.token($0[...]) != nil }.count
        #expect(found >= 1 && found <= slots + slots % 2)
        #expect(memo.token(tokens.last![...]) != nil, "the newest is always kept")
    }
}

@Suite("Streem /v1/me answer")
struct StreemMeBodyTests {
    @Test(
        "the answer is the one the object {sub, name} serializes to, a missing claim as null",
        arguments: [
            (JSONValue.string("invitee-123456789"), JSONValue.string("invitee-123456789")),
            (.string("quote\"back\\slash\u{1}ü"), .null), (.number(7), .string(""))
        ])
    func body(subject: JSONValue, name: JSONValue) throws {
        let token = VerifiedStreemToken(
            token: "h.p.s", subject: subject == .null ? nil : subject, name: name == .null ? nil : name, forUs: true, expires: nil,
            sessionExpires: nil)
        let object: JSONValue = ["sub": subject, "name": name]
        #expect(StreemService.meBody(token) == object.serialized())
    }
}
