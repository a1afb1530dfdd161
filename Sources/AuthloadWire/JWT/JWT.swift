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
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let signature = Base64.urlDecoded(parts[2]),
            let headerJSON = Base64.urlDecoded(parts[0]).flatMap({ try? JSONValue.parse($0) }),
            headerJSON["alg"]?.stringValue == "HS256"
        else { return nil }
        let expected = Digest.hmacSHA256(key: key, Array("\(parts[0]).\(parts[1])".utf8))
        guard Digest.constantTimeEqual(signature, expected) else { return nil }
        return claims(of: token)
    }

    /// The claims of `token`, signature unchecked; nil when it is not a JWT with a JSON object payload.
    public static func claims(of token: String) -> JSONValue? {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let payload = Base64.urlDecoded(parts[1]),
            let claims = try? JSONValue.parse(payload), claims.objectValue != nil
        else { return nil }
        return claims
    }
}
