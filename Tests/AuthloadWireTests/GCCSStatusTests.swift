import AuthloadCore
import Testing

@testable import AuthloadWire

@Suite("GCCS status message bodies")
struct GCCSStatusTests {
    @Test("each status's body is its JSON object, read back the same whether matched as written or parsed")
    func bodiesRoundTrip() throws {
        for status in GCCSStatus.allCases {
            let body = status.messageBody
            #expect(try JSONValue.parse(body) == .object(["status": .string(status.rawValue)]))
            #expect(GCCSStatus(messageBody: body) == status)
            #expect(GCCSStatus(parsing: body) == status)
        }
    }

    @Test("a status's ordinal is its place among all cases")
    func ordinals() {
        #expect(GCCSStatus.allCases.map(\.ordinal) == Array(GCCSStatus.allCases.indices))
    }

    @Test(
        "reads other spellings of a status object by parsing them, and refuses what is not one",
        arguments: [
            (#"{ "status" : "AuthCompleted" }"#, GCCSStatus.authCompleted),
            (#"{"other":1,"status":"SelectNodes"}"#, .selectNodes),
            (#"{"status":"AuthCompleted","status2":"x"}"#, .authCompleted),
            (#"{"status":"authcompleted"}"#, nil),
            (#"{"status":"Unknown"}"#, nil),
            (#"{"status":7}"#, nil),
            (#"["AuthCompleted"]"#, nil),
            (#"{"status":"AuthCompleted""#, nil)
        ])
    func otherSpellings(body: String, expected: GCCSStatus?) {
        #expect(GCCSStatus(messageBody: Array(body.utf8)) == expected)
    }
}
