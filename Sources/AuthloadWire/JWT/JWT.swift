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
    /// The header this type writes, as it stands in a token.
    private static let header = Base64.urlEncoded(JSONValue.object(["alg": "HS256", "typ": "JWT"]).serialized())
    private static let headerBytes = Array(header.utf8)

    public static func signHS256(_ claims: JSONValue, key: [UInt8]) -> String {
        signHS256(payload: claims.serialized(), key: key)
    }

    /// Signs claims already serialized as a JSON object, for a minter that writes its claims as bytes.
    ///
    /// The token is built in one buffer: header, payload and signature appended in place, the HMAC computed over
    /// the buffer itself.
    public static func signHS256(payload: [UInt8], key: [UInt8]) -> String {
        signHS256(payload: payload) { Digest.hmacSHA256(key: key, $0) }
    }

    /// ``signHS256(_:key:)-(_,[UInt8])`` under a key set up once, for a service that mints many tokens.
    public static func signHS256(_ claims: JSONValue, key: HMACKey) -> String {
        signHS256(payload: claims.serialized(), key: key)
    }

    /// ``signHS256(payload:key:)-(_,[UInt8])`` under a key set up once, for a service that mints many tokens.
    public static func signHS256(payload: [UInt8], key: HMACKey) -> String {
        signHS256(payload: payload) { key.sha256($0) }
    }

    /// ``verifyHS256(_:key:)-(_,[UInt8])`` under a key set up once, for a service that checks many tokens.
    public static func verifyHS256(_ token: String, key: HMACKey) -> JSONValue? {
        verifyHS256(token) { key.sha256($0) }
    }

    private static func signHS256(payload: [UInt8], mac: (UnsafeRawBufferPointer) -> [UInt8]) -> String {
        var token: [UInt8] = []
        // Header, two dots, the payload's encoding and the 43 characters of a SHA-256 signature's.
        token.reserveCapacity(headerBytes.count + 2 + (payload.count + 2) / 3 * 4 + 43)
        token.append(contentsOf: headerBytes)
        token.append(dot)
        payload.withUnsafeBytes { Base64.appendURLEncoded($0, to: &token) }
        let signature = token.withUnsafeBytes(mac)
        token.append(dot)
        signature.withUnsafeBytes { Base64.appendURLEncoded($0, to: &token) }
        return String(decoding: token, as: UTF8.self)
    }

    /// The claims of a token whose HS256 signature checks out under `key`; nil otherwise.
    ///
    /// The token is read in place: its segments are ranges of its bytes, and the HMAC runs over them.
    public static func verifyHS256(_ token: String, key: [UInt8]) -> JSONValue? {
        verifyHS256(token) { Digest.hmacSHA256(key: key, $0) }
    }

    private static func verifyHS256(_ token: String, mac: (UnsafeRawBufferPointer) -> [UInt8]) -> JSONValue? {
        var token = token
        return token.withUTF8 { bytes -> JSONValue? in
            guard let parts = Segments(bytes), let signature = Base64.urlDecoded(parts.signature) else { return nil }
            // The header this type writes needs no parsing; any other must still say HS256.
            if !parts.header.elementsEqual(headerBytes) {
                guard let headerJSON = Base64.urlDecoded(parts.header).flatMap({ try? JSONValue.parse($0) }),
                    headerJSON["alg"]?.stringValue == "HS256"
                else { return nil }
            }
            let expected = mac(UnsafeRawBufferPointer(parts.signed))
            guard Digest.constantTimeEqual(signature, expected) else { return nil }
            return claims(payload: parts.payload)
        }
    }

    /// The claims of `token`, signature unchecked; nil when it is not a JWT with a JSON object payload.
    public static func claims(of token: String) -> JSONValue? {
        var token = token
        return token.withUTF8 { bytes in Segments(bytes).flatMap { claims(payload: $0.payload) } }
    }

    private static func claims(payload: UnsafeBufferPointer<UInt8>) -> JSONValue? {
        guard let bytes = Base64.urlDecoded(payload), let claims = try? JSONValue.parse(bytes), claims.objectValue != nil else {
            return nil
        }
        return claims
    }

    private static let dot = UInt8(ascii: ".")

    /// The three dot-separated segments of a compact JWT, as ranges of its bytes (a token is ASCII; splitting by
    /// `Character`, then into an array of slices, cost a simulated soak more than the HMAC did).
    private struct Segments {
        let header: UnsafeBufferPointer<UInt8>
        let payload: UnsafeBufferPointer<UInt8>
        let signature: UnsafeBufferPointer<UInt8>
        /// Header, dot and payload: what the signature signs.
        let signed: UnsafeBufferPointer<UInt8>

        /// Nil unless there are exactly three segments (two dots).
        init?(_ bytes: UnsafeBufferPointer<UInt8>) {
            guard let first = bytes.firstIndex(of: dot),
                let second = bytes[(first + 1)...].firstIndex(of: dot),
                !bytes[(second + 1)...].contains(dot)
            else { return nil }
            header = UnsafeBufferPointer(rebasing: bytes[..<first])
            payload = UnsafeBufferPointer(rebasing: bytes[(first + 1)..<second])
            signature = UnsafeBufferPointer(rebasing: bytes[(second + 1)...])
            signed = UnsafeBufferPointer(rebasing: bytes[..<second])
        }
    }
}
