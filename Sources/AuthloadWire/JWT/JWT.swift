import AuthloadCore

/// Compact JSON Web Tokens signed with HS256 (RFC 7515/7519), the signature from OpenSSL's HMAC.
///
/// The staging services mint and verify them; a client only reads the claims (`exp`, `session_exp`)
/// to know when to refresh, as the Streem SDK does.
///
/// ```swift
/// let token = JWT.signHS256(["sub": "u1", "exp": 1_700_000_030], key: secret)
/// JWT.verifyHS256(token, key: secret)?["sub"]      // "u1"
/// JWT.claims(of: token)?["exp"]?.intValue            // without checking the signature
/// ```
public enum JWT {
    private static let header = Base64.urlEncoded(JSONValue.object(["alg": "HS256", "typ": "JWT"]).serialized())

    public static func signHS256(_ claims: JSONValue, key: [UInt8]) -> String {
        let signingInput = header + "." + Base64.urlEncoded(claims.serialized())
        return signingInput + "." + Base64.urlEncoded(Digest.hmacSHA256(key: key, Array(signingInput.utf8)))
    }

    /// The claims of a token whose HS256 signature checks out under `key`; nil otherwise.
    public static func verifyHS256(_ token: String, key: [UInt8]) -> JSONValue? {
        guard let parts = segments(of: token), let signature = Base64.urlDecoded(parts.signature) else { return nil }
        // The header this type writes needs no parsing; any other must still say HS256.
        if parts.header != header {
            guard let headerJSON = Base64.urlDecoded(parts.header).flatMap({ try? JSONValue.parse($0) }),
                headerJSON["alg"]?.stringValue == "HS256"
            else { return nil }
        }
        let expected = Digest.hmacSHA256(key: key, Array(token.utf8[..<parts.signature.startIndex].dropLast()))
        guard Digest.constantTimeEqual(signature, expected) else { return nil }
        return claims(payload: parts.payload)
    }

    /// The claims of `token`, signature unchecked; nil when it is not a JWT with a JSON object payload.
    public static func claims(of token: String) -> JSONValue? {
        segments(of: token).flatMap { claims(payload: $0.payload) }
    }

    private static func claims(payload: Substring) -> JSONValue? {
        guard let bytes = Base64.urlDecoded(payload), let claims = try? JSONValue.parse(bytes), claims.objectValue != nil else {
            return nil
        }
        return claims
    }

    /// The three dot-separated segments of a compact JWT, split on its bytes (a token is ASCII; splitting by
    /// `Character` cost a tenth of a simulated soak); nil unless there are exactly three.
    private static func segments(of token: String) -> (header: Substring, payload: Substring, signature: Substring)? {
        let parts = token.utf8.split(separator: UInt8(ascii: "."), maxSplits: 3, omittingEmptySubsequences: false)
        guard parts.count == 3 else { return nil }
        return (Substring(parts[0]), Substring(parts[1]), Substring(parts[2]))
    }
}
