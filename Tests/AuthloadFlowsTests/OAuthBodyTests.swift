import AuthloadCore
import Testing

@testable import AuthloadFlows

@Suite("OAuth answers read straight from their bytes")
struct OAuthBodyTests {
    /// What reading a tree gave: the two members as strings, nil when absent, of another type, or the body not JSON.
    private func fromTree(_ text: String, requiring member: String) -> OktaIDXFlow.OAuthBody {
        let json = try? JSONValue.parse(text)
        return OktaIDXFlow.OAuthBody(required: json?[member]?.stringValue, error: json?["error"]?.stringValue)
    }

    @Test(
        "reads the required member and error as a tree does",
        arguments: [
            #"{"interaction_handle": "abc"}"#, #"{"interaction_handle": 5, "error": "invalid_client"}"#,
            #"{"error": "invalid_grant", "error_description": "x", "interaction_handle": ""}"#,
            #"{"interaction_handle": "a", "interaction_handle": "b"}"#, #"{"x": {"error": "inner"}, "interaction_handle": "h"}"#,
            #"["interaction_handle", "h"]"#, #""interaction_handle""#, #"{"interaction_handle": "h"} x"#,
            #"{"interaction_handle": "h", "x": [1, 2,]}"#, #"{"interaction_handle": "h\u00e9\n"}"#, #"{"error": null}"#,
            "", "\u{FEFF}{\"interaction_handle\": \"bom\"}", #"{"interaction_handle": "h", "nested": {"a": 1, "a": 2}}"#
        ])
    func matchesTree(_ text: String) {
        let read = OktaIDXFlow.OAuthBody(Array(text.utf8), requiring: "interaction_handle")
        #expect(read == fromTree(text, requiring: "interaction_handle"))
    }

    @Test("agrees with the tree on random bodies made of OAuth members, other values and broken bytes")
    func randomBodies() {
        var random = SplitMix64(seed: 29)
        let members = [
            #""access_token": "t1""#, #""access_token": 7"#, #""access_token": """#, #""error": "invalid_grant""#, #""error": false"#,
            #""error_description": "d""#, #""scope": ["openid", "profile"]"#, #""nested": {"error": "no", "access_token": "no"}"#,
            #""expires_in": 3600"#, #""access_token": "a\"b""#, #""x": [1,]"#, #""x": tru"#, #""access_tokens": "near""#
        ]
        var agreed = 0
        for _ in 0..<2_000 {
            let count = Int.random(in: 0...4, using: &random)
            let chosen = (0..<count).map { _ in members[Int.random(in: 0..<members.count, using: &random)] }
            var text = "{" + chosen.joined(separator: ", ") + "}"
            if Int.random(in: 0..<8, using: &random) == 0 { text.removeLast() }
            let read = OktaIDXFlow.OAuthBody(Array(text.utf8), requiring: "access_token")
            let expected = fromTree(text, requiring: "access_token")
            #expect(read == expected, "\(text)")
            if expected.required != nil || expected.error != nil { agreed += 1 }
        }
        // The table must make bodies that carry the members, not only ones that read as nothing.
        #expect(agreed > 250)
    }

    @Test("a 200 needs the member, a 4xx is named by its error, anything else by its status")
    func classification() {
        func classify(_ status: Int, _ text: String) -> Outcome {
            OktaIDXFlow.classifyOAuth(HTTPResponse(status: status, body: Array(text.utf8)), requiring: "access_token")
        }
        #expect(classify(200, #"{"access_token": "t"}"#) == .ok)
        #expect(classify(200, #"{"access_token": ""}"#) == Outcome(.protocolError, "no access_token"))
        #expect(classify(200, #"{"access_token": "t", "access_token": "u"}"#) == Outcome(.protocolError, "no access_token"))
        #expect(classify(400, #"{"error": "invalid_grant"}"#) == Outcome(.protocolError, "invalid_grant"))
        #expect(classify(400, #"{"error": ""}"#) == Outcome(.httpError, "400"))
        #expect(classify(500, #"{"error": "server"}"#) == Outcome(.httpError, "500"))
    }
}
