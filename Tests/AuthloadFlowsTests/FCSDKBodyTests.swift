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
}
