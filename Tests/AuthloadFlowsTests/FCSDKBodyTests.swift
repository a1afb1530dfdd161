import AuthloadCore
import Testing

@testable import AuthloadFlows
@testable import AuthloadStaging

/// The FCSDK login's bodies, written as bytes rather than built as JSON values.
@Suite("FCSDK login bodies")
struct FCSDKBodyTests {
    /// Plain values, values that need escaping, non-ASCII and empty ones.
    static let values = [
        ("user1@example.com", "demo-password", "sip.example.com"), ("quote\"back\\slash", "tab\tnew\nline\u{1}", "ü-日本"),
        ("", "", "")
    ]

    @Test("the credentials are those the object {username, password} serializes to", arguments: values)
    func credentials(username: String, password: String, _: String) throws {
        let bytes = FCSDKLoginFlow.credentials(username: username, password: password)
        let object: JSONValue = ["username": .string(username), "password": .string(password)]
        #expect(bytes == object.serialized())
        #expect(try JSONValue.parse(bytes) == object)
    }

    @Test("the login answer is the one the object {sessionid, voiceUser, voiceDomain} serializes to", arguments: values)
    func loginBody(sessionID: String, voiceUser: String, voiceDomain: String) throws {
        let bytes = FCSDKLoginService.loginBody(sessionID: sessionID, voiceUser: voiceUser, voiceDomain: voiceDomain)
        let object: JSONValue = ["sessionid": .string(sessionID), "voiceUser": .string(voiceUser), "voiceDomain": .string(voiceDomain)]
        #expect(bytes == object.serialized())
        #expect(try JSONValue.parse(bytes) == object)
    }

    @Test(
        "a session id is both numbers in unpadded lowercase hex, as String(_:radix:) writes them",
        arguments: [(0, 0), (1, 15), (16, 255), (0xdead_beef, UInt64.max), (UInt64.max, 0), (1 << 63, 0x0123_4567_89ab_cdef)]
            as [(UInt64, UInt64)])
    func sessionID(first: UInt64, second: UInt64) {
        #expect(FCSDKLoginService.sessionID((first, second)) == String(first, radix: 16) + String(second, radix: 16))
        var random = SplitMix64(seed: first ^ second)
        for _ in 0..<1_000 {
            let token = (random.next() >> (random.next() % 64), random.next() >> (random.next() % 64))
            #expect(FCSDKLoginService.sessionID(token) == String(token.0, radix: 16) + String(token.1, radix: 16))
        }
    }
}
