import AuthloadCore
import AuthloadWire
import Testing

@testable import AuthloadFlows

@Suite("The methods an IDX option offers")
struct IDXOptionMethodTests {
    /// Options as orgs shape them: a method fixed, offered among options, absent, or not a string, possibly twice.
    static let options: [IDXOption] = {
        let fields: [[IDXField]] = [
            [], [IDXField(name: "id", value: "aut1")], [IDXField(name: "methodType", value: "email")],
            [IDXField(name: "methodType", value: 5)], [IDXField(name: "methodType")],
            [
                IDXField(
                    name: "methodType",
                    options: [
                        IDXOption(label: "SMS", value: "sms"), IDXOption(label: "?", value: 3), IDXOption(label: "Voice", value: "voice")
                    ])
            ],
            [IDXField(name: "methodType", value: "push", options: [IDXOption(label: "SMS", value: "sms")])],
            [IDXField(name: "methodType", options: [IDXOption(label: "?", value: nil)])],
            [IDXField(name: "methodType", value: "totp"), IDXField(name: "methodType", value: "sms")]
        ]
        return fields.flatMap { form in [IDXOption(label: "x", form: form), IDXOption(label: "y", value: "sms", form: form)] }
    }()

    @Test("found in place as in the list of method types", arguments: options)
    func offersAsTheList(option: IDXOption) {
        for method in ["sms", "voice", "email", "push", "totp", "5", ""] {
            #expect(option.offers(method: method) == (option.value?.stringValue == method || option.methodTypes.contains(method)))
            #expect(option.offersMethodType { $0 == method } == option.methodTypes.contains(method))
        }
        #expect(option.offersMethodType() == !option.methodTypes.isEmpty)
    }
}
