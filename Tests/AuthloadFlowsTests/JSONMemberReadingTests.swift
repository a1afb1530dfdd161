import AuthloadCore
import Testing

@testable import AuthloadFlows
@testable import AuthloadStaging

/// The members flows and services read from JSON bodies without building a tree: each read must say what
/// `JSONValue.parse` and a look-up of the member would say, for bodies good and bad.
@Suite("JSON members read without a tree")
struct JSONMemberReadingTests {
    static let bodies: [String] = [
        #"{"sessionid":"abc","voiceUser":"u"}"#,
        #"{"voiceUser":"u", "sessionid" : "a\"b\u00e9"}"#,
        // The key spelled with escapes is the same key once decoded.
        #"{"session\u0069d":"escaped-key"}"#,
        #"{"sessionid":42}"#,
        #"{"sessionid":null}"#,
        #"{"sessionid":""}"#,
        #"{"other":{"sessionid":"nested"}}"#,
        #"["sessionid","abc"]"#,
        #""sessionid""#,
        #"{"sessionid":"abc"} trailing"#,
        #"{"sessionid":"abc","sessionid":"twice"}"#,
        #"{"sessionid":"abc",}"#,
        #"{"sessionid":"abc""#,
        "",
        "{\"sessionid\":\"bad \u{1} control\"}"
    ]

    @Test("a response's string member is what parsing the body and looking it up gives", arguments: bodies)
    func responseMember(body: String) {
        let response = HTTPResponse(status: 200, body: Array(body.utf8))
        let expected = (try? JSONValue.parse(Array(body.utf8)))?["sessionid"]?.stringValue
        #expect(response.jsonString("sessionid") == expected)
    }

    @Test("a login's session id is that string member, or nil when it is empty", arguments: bodies)
    func sessionID(body: String) {
        let response = HTTPResponse(status: 200, body: Array(body.utf8))
        let member = (try? JSONValue.parse(Array(body.utf8)))?["sessionid"]?.stringValue
        #expect(FCSDKLoginFlow.sessionID(in: response) == (member?.isEmpty == false ? member : nil))
    }

    @Test(
        "the service reads credentials only from an object with both strings",
        arguments: [
            (#"{"username":"u1","password":"pw"}"#, true),
            (#"{"password":"pw","extra":[1,2,{"a":null}],"username":"u\u00fc"}"#, true),
            (#"{"username":"u1"}"#, false),
            (#"{"username":"u1","password":7}"#, false),
            (#"{"username":"u1","password":"pw","username":"u2"}"#, false),
            (#"{"username":"u1","password":"pw"}x"#, false),
            (#"[{"username":"u1","password":"pw"}]"#, false)
        ])
    func credentials(body: String, readable: Bool) throws {
        let found = FCSDKLoginService.credentials(in: Array(body.utf8))
        #expect((found != nil) == readable)
        guard let found else { return }
        let object = try JSONValue.parse(Array(body.utf8))
        #expect(found.username == object["username"]?.stringValue)
        #expect(found.password == object["password"]?.stringValue)
    }
}
