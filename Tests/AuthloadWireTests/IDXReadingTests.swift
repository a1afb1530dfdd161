import AuthloadCore
import Testing

@testable import AuthloadWire

@Suite("IDX responses read straight from their bytes")
struct IDXReadingTests {
    private func read(_ text: String) -> IDXResponse? { IDXResponse(body: Array(text.utf8)) }

    @Test(
        "a body that is not valid JSON, not an object, or repeats a key reads as nothing",
        arguments: [
            #"[{"stateHandle": "h"}]"#, #"{"stateHandle": "h""#, #"{"stateHandle": "h"} x"#,
            #"{"stateHandle": "h", "stateHandle": "i"}"#,
            #"{"stateHandle": "h", "app": {"value": {"id": 1, "id": 2}}}"#,
            #"{"stateHandle": "h", "app": {"value": [1, 2,]}}"#, #"{"stateHandle": "h", "app": tru}"#,
            #"{"intent": "LOGIN"}"#
        ])
    func rejects(_ body: String) {
        #expect(read(body) == nil)
    }

    @Test("members of the wrong type count as absent, and entries that are not objects are dropped")
    func lenientMembers() throws {
        let response = try #require(
            read(
                #"{"stateHandle": 7, "expiresAt": "2026-01-01T00:00:00.000Z", "remediation": {"type": "array", "value": [1, "#
                    + #"{"name": "x", "href": "/h", "method": false, "relatesTo": ["$.a", 3], "refresh": 1.5, "#
                    + #""value": [{"name": 5}, {"name": "f", "required": "yes", "visible": false, "value": null, "form": {"value": {}}}]}, "#
                    + #"{"name": "no-href"}]}}"#))
        #expect(response.stateHandle == nil)
        #expect(response.expiresAt == "2026-01-01T00:00:00.000Z")
        let remediation = try #require(response.remediations.first)
        #expect(response.remediations.count == 1)
        #expect(remediation.method == "POST")
        #expect(remediation.relatesTo == ["$.a"])
        #expect(remediation.refresh == nil)
        #expect(remediation.fields == [IDXField(name: "f", visible: false, value: .null)])
    }

    @Test("a remediation, field or authenticator whose name, href or type is of the wrong type is dropped whole")
    func wrongTypedIdentity() throws {
        let response = try #require(
            read(
                #"{"remediation": {"value": [{"name": 1, "href": "/a"}, {"name": "b", "href": ["/b"]}, {"name": "c", "href": "/c", "#
                    + #""value": [{"name": null, "label": "L"}, {"label": "M"}, {"name": "g"}]}]}, "#
                    + #""authenticators": {"value": [{"type": 1, "id": "x"}, {"id": "y"}, {"type": "email", "id": "z"}]}}"#))
        #expect(response.remediations.map(\.name) == ["c"])
        #expect(response.remediations.first?.href == "/c")
        #expect(response.remediations.first?.fields == [IDXField(name: "g")])
        #expect(response.authenticators == [IDXAuthenticator(type: "email", id: "z")])
    }

    @Test("an option's object value is its form when it has one, and its value as it stands when not")
    func optionValues() throws {
        let response = try #require(
            read(
                #"{"stateHandle": "h", "remediation": {"value": [{"name": "pick", "href": "/p", "value": [{"name": "authenticator", "#
                    + #""options": [{"label": "Email", "value": {"form": {"value": [{"name": "id", "value": "aut1"}]}}}, "#
                    + #"{"label": "Other", "value": {"id": "aut2", "form": {"value": 3}}, "relatesTo": "$.authenticators.value[1]"}, "#
                    + #"{"label": "SMS", "value": "sms"}, 4]}]}]}}"#))
        let options = try #require(response.remediations.first?.fields.first?.options)
        #expect(
            options == [
                IDXOption(label: "Email", form: [IDXField(name: "id", value: "aut1")]),
                IDXOption(label: "Other", value: ["id": "aut2", "form": ["value": 3]], relatesTo: "$.authenticators.value[1]"),
                IDXOption(label: "SMS", value: "sms")
            ])
    }

    @Test("the enrollment being challenged wins over the authenticator, even when it is no authenticator")
    func currentAuthenticator() throws {
        let email =
            #""currentAuthenticator": {"type": "object", "value": {"type": "email", "id": "aut1", "methods": [{"type": "email"}, 2]}}"#
        let alone = try #require(read(#"{"stateHandle": "h", \#(email)}"#))
        #expect(alone.currentAuthenticator == IDXAuthenticator(type: "email", id: "aut1", methods: ["email"]))
        let both = try #require(read(#"{"stateHandle": "h", "currentAuthenticatorEnrollment": {"value": {"id": "x"}}, \#(email)}"#))
        #expect(both.currentAuthenticator == nil)
        let question = try #require(
            read(
                #"{"stateHandle": "h", "currentAuthenticatorEnrollment": {"value": {"type": "security_question", "profile": {"questionKey": "q"}}}}"#
            ))
        #expect(question.currentAuthenticator == IDXAuthenticator(type: "security_question", questionKey: "q"))
    }

    @Test("the enrollment wins in whichever order the two come, and only when it has a value")
    func currentAuthenticatorOrder() throws {
        let email = #""currentAuthenticator": {"value": {"type": "email"}}"#
        let after = try #require(read(#"{"stateHandle": "h", \#(email), "currentAuthenticatorEnrollment": {"value": 3}}"#))
        #expect(after.currentAuthenticator == nil)
        let phone = #""currentAuthenticatorEnrollment": {"value": {"type": "phone"}}"#
        let first = try #require(read(#"{"stateHandle": "h", \#(phone), \#(email)}"#))
        #expect(first.currentAuthenticator == IDXAuthenticator(type: "phone"))
        let last = try #require(read(#"{"stateHandle": "h", \#(email), \#(phone)}"#))
        #expect(last.currentAuthenticator == IDXAuthenticator(type: "phone"))
        let valueless = try #require(read(#"{"stateHandle": "h", "currentAuthenticatorEnrollment": {"type": "object"}, \#(email)}"#))
        #expect(valueless.currentAuthenticator == IDXAuthenticator(type: "email"))
        let notObject = try #require(read(#"{"stateHandle": "h", \#(email), "currentAuthenticatorEnrollment": []}"#))
        #expect(notObject.currentAuthenticator == IDXAuthenticator(type: "email"))
    }

    @Test("messages default to INFO and keep their text as key when they have none")
    func messages() throws {
        let response = try #require(
            read(
                #"{"messages": {"type": "array", "value": [{"message": "Hello"}, "x", "#
                    + #"{"message": "No", "i18n": {"key": "idx.no"}, "class": "ERROR"}]}}"#))
        #expect(
            response.messages == [IDXMessage(level: "INFO", key: "Hello", text: "Hello"), IDXMessage(key: "idx.no", text: "No")])
    }

    @Test(
        "the first error is the first of all errors: top-level, then on fields, nested forms and option forms in order",
        arguments: [
            (#"{"messages": {"value": [{"message": "i"}, {"message": "top", "class": "ERROR"}]}, "#, "top"),
            (#"{"#, "nested"),
            (#"{"messages": {"value": [{"message": "i"}]}, "#, "nested")
        ])
    func firstError(prefix: String, expected: String) throws {
        let error = { (key: String) in #"{"message": "\#(key)", "class": "ERROR"}"# }
        let remediations =
            #""remediation": {"value": [{"name": "a", "href": "/a", "value": [{"name": "plain", "messages": {"value": [{"message": "info"}]}}, "#
            + #"{"name": "credentials", "form": {"value": [{"name": "passcode", "messages": {"value": [\#(error("nested"))]}}]}}]}, "#
            + #"{"name": "b", "href": "/b", "value": [{"name": "authenticator", "options": [{"label": "x", "value": {"form": {"value": "#
            + #"[{"name": "id", "messages": {"value": [\#(error("option"))]}}]}}}], "messages": {"value": [\#(error("field"))]}}]}]}}"#
        let response = try #require(read(prefix + remediations))
        #expect(response.errors.count == (expected == "top" ? 4 : 3))
        #expect(response.firstError == response.errors.first)
        #expect(response.firstError?.key == expected)
        let withoutErrors = try #require(read(#"{"remediation": {"value": [{"name": "a", "href": "/a", "value": [{"name": "x"}]}]}}"#))
        #expect(withoutErrors.firstError == nil)
    }
}
