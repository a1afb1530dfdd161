import AuthloadCore
import AuthloadWire
import Testing

@Suite("HS256 JSON Web Tokens")
struct JWTTests {
    static let key = Array("a key of thirty-two bytes, as Streem's is".utf8)
    static let claims: JSONValue = ["sub": "user1@example.com", "exp": 1_700_000_030]

    /// A token with `header` as its header and `claims` as its payload, signed with `key`.
    static func token(header: JSONValue, claims: JSONValue = claims, key: [UInt8] = key) -> String {
        let input = Base64.urlEncoded(header.serialized()) + "." + Base64.urlEncoded(claims.serialized())
        return input + "." + Base64.urlEncoded(Digest.hmacSHA256(key: key, Array(input.utf8)))
    }

    @Test("a signed token verifies under its key to its claims, which are also readable unchecked")
    func roundTrip() {
        let token = JWT.signHS256(Self.claims, key: Self.key)
        #expect(token.split(separator: ".").count == 3)
        #expect(JWT.verifyHS256(token, key: Self.key) == Self.claims)
        #expect(JWT.claims(of: token) == Self.claims)
    }

    @Test("a token is its header, payload and signature each encoded apart, whether signed from claims or their bytes")
    func layout() {
        let expected = Self.token(header: ["alg": "HS256", "typ": "JWT"])
        #expect(JWT.signHS256(Self.claims, key: Self.key) == expected)
        #expect(JWT.signHS256(payload: Self.claims.serialized(), key: Self.key) == expected)
        // Payload lengths of every remainder modulo three, and an empty key.
        for extra in ["", "x", "xy"] {
            let claims: JSONValue = ["sub": .string("u" + extra)]
            #expect(JWT.signHS256(claims, key: []) == Self.token(header: ["alg": "HS256", "typ": "JWT"], claims: claims, key: []))
            #expect(JWT.verifyHS256(JWT.signHS256(claims, key: []), key: []) == claims)
        }
    }

    @Test("a key set up once signs and verifies as the same bytes do")
    func setUpKey() {
        let key = HMACKey(Self.key)
        let token = JWT.signHS256(Self.claims, key: key)
        #expect(token == JWT.signHS256(Self.claims, key: Self.key))
        #expect(JWT.signHS256(payload: Self.claims.serialized(), key: key) == token)
        #expect(JWT.verifyHS256(token, key: key) == Self.claims)
        #expect(JWT.verifyHS256(token, key: HMACKey(Array("another key".utf8))) == nil)
    }

    @Test("another header that names HS256 verifies; one that names another algorithm, or none, does not")
    func headers() {
        #expect(JWT.verifyHS256(Self.token(header: ["typ": "JWT", "alg": "HS256", "kid": "1"]), key: Self.key) == Self.claims)
        #expect(JWT.verifyHS256(Self.token(header: ["alg": "none"]), key: Self.key) == nil)
        #expect(JWT.verifyHS256(Self.token(header: ["alg": "HS512"]), key: Self.key) == nil)
        #expect(JWT.verifyHS256(Self.token(header: ["typ": "JWT"]), key: Self.key) == nil)
    }

    @Test("another key, a changed payload or signature, or a token not of three segments is refused")
    func refusals() {
        let token = JWT.signHS256(Self.claims, key: Self.key)
        let parts = token.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        let other: JSONValue = ["sub": "admin", "exp": 1_700_000_030]
        let otherPayload = Base64.urlEncoded(other.serialized())
        let flipped = (parts[2].first == "A" ? "B" : "A") + parts[2].dropFirst()
        #expect(JWT.verifyHS256(token, key: Array("another key".utf8)) == nil)
        #expect(JWT.verifyHS256([parts[0], otherPayload, parts[2]].joined(separator: "."), key: Self.key) == nil)
        #expect(JWT.verifyHS256([parts[0], parts[1], flipped].joined(separator: "."), key: Self.key) == nil)
        #expect(JWT.verifyHS256(token + ".", key: Self.key) == nil)
        #expect(JWT.verifyHS256(parts[0] + "." + parts[1], key: Self.key) == nil)
        #expect(JWT.verifyHS256("", key: Self.key) == nil)
        #expect(JWT.verifyHS256("..", key: Self.key) == nil)
        #expect(JWT.verifyHS256(parts[0] + ".." + parts[2], key: Self.key) == nil, "an empty payload")
        #expect(JWT.verifyHS256(parts[0] + "." + parts[1] + ".", key: Self.key) == nil, "an empty signature")
        #expect(JWT.claims(of: token + ".x") == nil)
        #expect(JWT.claims(of: parts[0] + ".bm90IGpzb24." + parts[2]) == nil, "a payload that is not JSON")
    }
}
