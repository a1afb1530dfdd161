import AuthloadCore
import AuthloadWire

/// Why a remediation form could not be answered: the path of the field that had no value, or no option that fits.
struct IDXUnanswerable: Error, Equatable {
    enum Reason: Equatable {
        case noValue
        case noOption
    }

    var reason: Reason
    /// The field's path in the form, e.g. `["credentials", "answer"]`.
    var path: [String]

    var description: String {
        let field = path.joined(separator: ".")
        return reason == .noValue ? "no value for \(field)" : "no option of \(field) fits"
    }
}

extension Array where Element == IDXField {
    /// Serializes a remediation form per the request body rule of docs/protocols.md, Okta IDX: field name → value, a field with
    /// a `form` as a nested object, a field with `options` as the chosen option's value or form.
    ///
    /// Values come first from the flow (`value`, by the field's path, e.g. `["credentials", "passcode"]`), then
    /// from the server (`stateHandle`, an authenticator's `id`). A required field with neither makes the
    /// form unanswerable, and so does a field with options none of which fits: the error names the field, so
    /// the flow can say why it could not proceed.
    ///
    /// - Parameters:
    ///   - value: what the flow fills in at a path, or nil.
    ///   - choose: the option to take for a field with options, or nil when none fits.
    ///   - omitMissing: leave out fields without a value even when marked required, as the SDK does for the
    ///     token form's `client_secret`.
    func filled(
        value: ([String]) -> JSONValue?, choose: (IDXField) -> IDXOption?, omitMissing: Bool = false
    ) throws(IDXUnanswerable) -> JSONObject {
        var path: [String] = []
        path.reserveCapacity(4)
        return try filled(value: value, choose: choose, omitMissing: omitMissing, path: &path)
    }

    /// ``filled(value:choose:omitMissing:)`` at `path`, which holds each field's path while it is filled: one array
    /// for the whole form, where a path made for each field allocated one a field.
    private func filled(
        value: ([String]) -> JSONValue?, choose: (IDXField) -> IDXOption?, omitMissing: Bool, path: inout [String]
    ) throws(IDXUnanswerable) -> JSONObject {
        var object = JSONObject()
        for field in self {
            path.append(field.name)
            defer { path.removeLast() }
            let missing = field.required && !omitMissing
            if let form = field.form {
                let nested: JSONObject
                do {
                    nested = try form.filled(value: value, choose: choose, omitMissing: omitMissing, path: &path)
                } catch {
                    // An optional object is left out, unless the server filled part of it in: then it expects it back whole.
                    if missing || form.contains(where: { $0.value != nil }) { throw error } else { continue }
                }
                if !nested.isEmpty { object.set(field.name, .object(nested)) }
            } else if !field.options.isEmpty {
                // A choice the flow cannot make (no factor of the profile's is offered) leaves the form unanswered.
                guard let option = choose(field) else {
                    if omitMissing { continue } else { throw IDXUnanswerable(reason: .noOption, path: path) }
                }
                if option.form.isEmpty {
                    object.set(field.name, option.value ?? .null)
                } else {
                    let nested = try option.form.filled(value: value, choose: choose, omitMissing: omitMissing, path: &path)
                    object.set(field.name, .object(nested))
                }
            } else if let filled = value(path) ?? field.value {
                object.set(field.name, filled)
            } else if missing {
                throw IDXUnanswerable(reason: .noValue, path: path)
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
        return offersMethodType { $0 == method }
    }

    /// Whether ``methodTypes`` has one that `matches`, found in place: the walker asks of every option for every
    /// method it would take, and the list made for each question was allocated only to be searched.
    func offersMethodType(_ matches: (String) -> Bool = { _ in true }) -> Bool {
        guard let index = form.firstIndex(where: { $0.name == "methodType" }) else { return false }
        if let fixed = form[index].value?.stringValue { return matches(fixed) }
        return form[index].options.contains { $0.value?.stringValue.map(matches) == true }
    }

    /// The method types the option's `methodType` field fixes or offers; empty when it has none, as a phone
    /// offered as `{id, enrollmentId}` whose method is asked for later.
    var methodTypes: [String] {
        guard let field = form.first(where: { $0.name == "methodType" }) else { return [] }
        if let fixed = field.value?.stringValue { return [fixed] }
        return field.options.compactMap { $0.value?.stringValue }
    }
}
