import AuthloadCore
import AuthloadWire
import Testing

@testable import AuthloadFlows

/// The answer a walker sends is written as bytes; these hold it to the filled object it stands for.
@Suite("IDX answers written as bytes: the filled form, serialized")
struct IDXAnswerBytesTests {
    typealias F = IDXFixtures

    /// The bytes, or the error, of both ways of answering `fields`.
    func both(
        _ fields: [IDXField], value: ([String]) -> JSONValue? = { _ in nil }, choose: (IDXField) -> IDXOption? = { $0.options.first }
    ) -> (bytes: Result<[UInt8], IDXUnanswerable>, object: Result<[UInt8], IDXUnanswerable>) {
        let bytes = Result { () throws(IDXUnanswerable) in try fields.serializedAnswer(value: value, choose: choose) }
        let object = Result { () throws(IDXUnanswerable) in
            JSONValue.object(try fields.filled(value: value, choose: choose)).serialized()
        }
        return (bytes, object)
    }

    static let forms: [IDXResponse] = [
        F.identify, F.identifyWithPassword, F.select(F.emailOption, F.passwordOption, F.phoneOption), F.passwordChallenge,
        F.emailChallenge, F.phoneChallenge, F.questionChallenge, F.phoneVerificationData, F.pushPoll, F.optionalEnrollment
    ]

    @Test("every fixture's form is answered with the serialization of its filled object, values or none")
    func fixtures() {
        let values: [([String]) -> JSONValue?] = [
            { _ in nil }, { $0.last == "passcode" || $0.last == "identifier" ? "x\"y\u{1}" : nil }, { _ in 7 }
        ]
        for response in Self.forms {
            for remediation in response.remediations {
                for value in values {
                    let (bytes, object) = both(remediation.fields, value: value)
                    #expect(bytes == object, "\(remediation.name)")
                }
                let (bytes, object) = both(remediation.fields, choose: { _ in nil })
                #expect(bytes == object, "\(remediation.name) with no option chosen")
            }
        }
    }

    @Test("optional forms left out, empty ones dropped, a repeated name answered as the object answers it")
    func edges() throws {
        let fields = [
            IDXField(name: "a", value: "1"),
            IDXField(name: "optional", form: [IDXField(name: "x", required: true)]),
            IDXField(name: "empty", form: [IDXField(name: "y")]),
            IDXField(name: "prefilled", form: [IDXField(name: "z", required: true), IDXField(name: "w", value: "v")]),
            IDXField(name: "choice", options: [IDXOption(label: "form", form: [IDXField(name: "q")])]),
            IDXField(name: "a", value: "2")
        ]
        // The pre-filled form is expected back whole: unanswerable at `z`.
        let (failed, failedObject) = both(fields)
        #expect(failed == failedObject)
        #expect(throws: IDXUnanswerable(reason: .noValue, path: ["prefilled", "z"])) { try failed.get() }
        let (bytes, object) = both(fields, value: { $0 == ["prefilled", "z"] ? "z" : nil })
        #expect(bytes == object)
        #expect(
            try JSONValue.parse(bytes.get())
                == ["a": "2", "prefilled": ["z": "z", "w": "v"], "choice": [:]])
        let nestedRepeat = [IDXField(name: "c", form: [IDXField(name: "p", value: 1), IDXField(name: "p", value: 2)])]
        let (nested, nestedObject) = both(nestedRepeat)
        #expect(nested == nestedObject && (try? nested.get()) == Array(#"{"c":{"p":2}}"#.utf8))
    }
}
