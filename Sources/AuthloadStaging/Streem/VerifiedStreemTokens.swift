import AuthloadCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What the Streem service's calls read of a token whose signature checked out, and no more.
///
/// A class: every call finds its token in the memo, and a reference comes out of it with one retain, where a copy of
/// the fields cost a retain and a release of each string they hold.
final class VerifiedStreemToken: Sendable, Equatable {
    /// The whole token: a slot is found by its signature, and only the same token reads it.
    let token: String
    let subject: JSONValue?
    let name: JSONValue?
    /// Whether its `aud` is the service's.
    let forUs: Bool
    /// Its `exp`, nil when it has none (then it is never valid for a call).
    let expires: Duration?
    let sessionExpires: Duration?

    init(token: String, subject: JSONValue?, name: JSONValue?, forUs: Bool, expires: Duration?, sessionExpires: Duration?) {
        self.token = token
        self.subject = subject
        self.name = name
        self.forUs = forUs
        self.expires = expires
        self.sessionExpires = sessionExpires
    }

    /// What `claims`, those of `token`, say to a service whose audience is `audience`.
    init(token: String, claims: JSONValue, audience: String) {
        self.token = token
        subject = claims["sub"]
        name = claims["name"]
        forUs = claims["aud"]?.stringValue == audience
        expires = claims["exp"]?.numberValue.map(Duration.seconds)
        sessionExpires = claims["session_exp"]?.numberValue.map(Duration.seconds)
    }

    static func == (a: VerifiedStreemToken, b: VerifiedStreemToken) -> Bool {
        (a.token, a.subject, a.name, a.forUs) == (b.token, b.subject, b.name, b.forUs)
            && (a.expires, a.sessionExpires) == (b.expires, b.sessionExpires)
    }
}

/// A fixed number of slots that remember tokens whose signature checked out, so that a call with a token seen before
/// skips the HMAC, the base64 and the JSON of its payload, as a server caching its verified tokens does.
///
/// Only a memo of the verification, never its answer: whether a token verifies does not change, and what it says
/// (`exp`, `session_exp`) is judged at every call by the caller. A pair of slots holds the last two tokens whose
/// signatures fell on it, so the memory is bounded by the slots whatever the run's length or rate. A table of every live token instead
/// (swept as they expired) kept ~7 MB more in a 2,000-user soak (`Benchmarks/soak-rss.sh`) than verifying every call.
struct VerifiedStreemTokens: Sendable {
    /// In pairs: a token falls on a pair and takes its first slot, the token there moving to the second. Two live
    /// tokens falling on one pair are both kept, where a slot of their own kept only the newer: with about as many live
    /// tokens as half the slots (a 2,000-user soak), many calls found their token pushed out and verified it again.
    private var slots: [Slot]

    /// A remembered token and the hash its pair was chosen by: a call whose hash differs is not that token, found without
    /// reading the token, which lies elsewhere in memory. Comparing each slot's token with the bearer made two cache
    /// misses a slot, and a call's token is often the second of its pair: the memo was 1 % of a mixed soak's CPU.
    private struct Slot {
        var hash: UInt64 = 0
        var token: VerifiedStreemToken?
    }

    /// - Parameter count: how many tokens it remembers at most (rounded up to an even number).
    init(slots count: Int) { slots = Array(repeating: Slot(), count: 2 * max(1, (count + 1) / 2)) }

    /// The token remembered for `bearer`, if it is that very token, byte for byte.
    func token(_ bearer: Substring) -> VerifiedStreemToken? {
        var bearer = bearer
        return bearer.withUTF8 { token($0) }
    }

    /// The token remembered for the bytes of `bearer`, if it is that very token.
    ///
    /// Compared as bytes: the signature covers the bytes, and `String`'s `==` (canonical equivalence) took a slow path for
    /// a `Substring` on every call a session made.
    func token(_ bearer: UnsafeBufferPointer<UInt8>) -> VerifiedStreemToken? {
        let (first, hash) = pair(of: bearer)
        for index in first...first + 1 where slots[index].hash == hash {
            if let known = slots[index].token, Self.same(known.token, bearer) { return known }
        }
        return nil
    }

    /// Keeps `token` first in its pair; the older of the pair's two is forgotten, unless it is the same token.
    mutating func remember(_ token: VerifiedStreemToken) {
        var text = token.token
        text.withUTF8 { bytes in
            let (first, hash) = pair(of: bytes)
            let again = slots[first].hash == hash && (slots[first].token.map { Self.same($0.token, bytes) } ?? false)
            if !again { slots[first + 1] = slots[first] }
            slots[first] = Slot(hash: hash, token: token)
        }
    }

    private static func same(_ token: String, _ bearer: UnsafeBufferPointer<UInt8>) -> Bool {
        var token = token
        return token.withUTF8 { token in
            token.count == bearer.count && (token.isEmpty || memcmp(token.baseAddress!, bearer.baseAddress!, token.count) == 0)
        }
    }

    /// The first slot of a token's pair, and the hash it was chosen by: from bytes of its signature, which an HMAC makes
    /// uniform (``FNV1a``, not `Hasher`: a simulation replays the same way). The last character is left out: it carries
    /// only four bits of the signature.
    private func pair(of token: UnsafeBufferPointer<UInt8>) -> (first: Int, hash: UInt64) {
        let hash = FNV1a.hash(token.suffix(9).dropLast())
        return (2 * Int(hash % UInt64(slots.count / 2)), hash)
    }
}
