import AuthloadCore
import AuthloadWire

extension Array where Element == IDXField {
    /// Serializes a remediation form per the request body rule of docs/protocols.md, Okta IDX: field name → value, a field with
    /// a `form` as a nested object, a field with `options` as the chosen option's value or form.
    ///
    /// Values come first from the flow (`value`, by the field's path, e.g. `["credentials", "passcode"]`), then
    /// from the server (`stateHandle`, an authenticator's `id`). A required field with neither makes the
    /// form unanswerable, and so does a field with options none of which fits: nil, so the flow can say at
    /// which remediation it could not proceed.
    ///
    /// - Parameters:
    ///   - value: what the flow fills in at a path, or nil.
    ///   - choose: the option to take for a field with options, or nil when none fits.
    ///   - omitMissing: leave out fields without a value even when marked required, as the SDK does for the
    ///     token form's `client_secret`.
    func filled(
        value: ([String]) -> JSONValue?, choose: (IDXField) -> IDXOption?, omitMissing: Bool = false,
        path: [String] = []
    ) -> JSONObject? {
        var object = JSONObject()
        for field in self {
            let fieldPath = path + [field.name]
            let missing = field.required && !omitMissing
            if let form = field.form {
                guard let nested = form.filled(value: value, choose: choose, omitMissing: omitMissing, path: fieldPath) else {
                    if missing { return nil } else { continue }
                }
                if !nested.isEmpty { object.set(field.name, .object(nested)) }
            } else if !field.options.isEmpty {
                // A choice the flow cannot make (the profile's factor is not offered) leaves the form unanswered.
                guard let option = choose(field) else {
                    if omitMissing { continue } else { return nil }
                }
                if option.form.isEmpty {
                    object.set(field.name, option.value ?? .null)
                } else {
                    guard let nested = option.form.filled(value: value, choose: choose, omitMissing: omitMissing, path: fieldPath) else {
                        return nil
                    }
                    object.set(field.name, .object(nested))
                }
            } else if let filled = value(fieldPath) ?? field.value {
                object.set(field.name, filled)
            } else if missing {
                return nil
            }
        }
        return object
    }
}

extension IDXOption {
    /// True when choosing this option selects `method` (`email`, `sms`): its own value is the method, or its
    /// form's `methodType` is fixed to it or offers it.
    func offers(method: String) -> Bool {
        if value?.stringValue == method { return true }
        return form.contains { field in
            field.name == "methodType" && (field.value?.stringValue == method || field.options.contains { $0.value?.stringValue == method })
        }
    }
}
