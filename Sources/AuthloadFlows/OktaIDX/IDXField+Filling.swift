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

extension Array where Element == IDXField {
    /// What ``filled(value:choose:omitMissing:)`` makes, serialized: the body a remediation is answered with, written
    /// straight into bytes. Every step of a login sent one, and filling a ``JSONObject`` of its members, nested objects
    /// and values only to serialize it cost more than the bytes.
    ///
    /// Byte for byte the serialization of the filled object, with the same errors, `value` and `choose` asked in the same
    /// order. A form that names a field twice, which the object answers with the last value in the first one's place,
    /// is filled as an object and serialized.
    func serializedAnswer(value: ([String]) -> JSONValue?, choose: (IDXField) -> IDXOption?) throws(IDXUnanswerable) -> [UInt8] {
        guard !hasRepeatedName else { return JSONValue.object(try filled(value: value, choose: choose)).serialized() }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(160)
        var path: [String] = []
        path.reserveCapacity(4)
        _ = try write(value: value, choose: choose, path: &path, to: &bytes)
        return bytes
    }

    /// Whether a form here, nested or an option's, names a field twice.
    private var hasRepeatedName: Bool {
        // By index, each field read in place: iterated, each was copied, every string and list in it retained.
        for index in indices {
            for earlier in startIndex..<index where self[earlier].name == self[index].name { return true }
            if self[index].form?.hasRepeatedName == true { return true }
            for option in self[index].options.indices where self[index].options[option].form.hasRepeatedName { return true }
        }
        return false
    }

    /// Appends the filled object (the rules of ``filled(value:choose:omitMissing:)``, nothing omitted) at `path`;
    /// returns how many members it has. A member left out after its key was written (an optional form that cannot be
    /// answered, or answers nothing) is cut off again.
    private func write(
        value: ([String]) -> JSONValue?, choose: (IDXField) -> IDXOption?, path: inout [String], to bytes: inout [UInt8]
    ) throws(IDXUnanswerable) -> Int {
        bytes.append(UInt8(ascii: "{"))
        var members = 0
        // Each field read in place through the buffer: iterated, or bound to a name, each was copied, every string and
        // list in it retained and released.
        try withUnsafeBufferPointer { fields throws(IDXUnanswerable) in
            for index in fields.indices {
                path.append(fields[index].name)
                defer { path.removeLast() }
                let start = bytes.count
                if let form = fields[index].form {
                    Self.writeKey(fields[index].name, after: members, to: &bytes)
                    let nested: Int
                    do throws(IDXUnanswerable) {
                        nested = try form.write(value: value, choose: choose, path: &path, to: &bytes)
                    } catch {
                        bytes.removeLast(bytes.count - start)
                        // An optional object is left out, unless the server filled part of it in: then it expects it
                        // back whole.
                        if fields[index].required || form.contains(where: { $0.value != nil }) { throw error } else { continue }
                    }
                    if nested == 0 { bytes.removeLast(bytes.count - start) } else { members += 1 }
                } else if !fields[index].options.isEmpty {
                    // A choice the flow cannot make (no factor of the profile's is offered) leaves the form unanswered.
                    guard let option = choose(fields[index]) else { throw IDXUnanswerable(reason: .noOption, path: path) }
                    Self.writeKey(fields[index].name, after: members, to: &bytes)
                    if option.form.isEmpty {
                        (option.value ?? .null).write(to: &bytes)
                    } else {
                        _ = try option.form.write(value: value, choose: choose, path: &path, to: &bytes)
                    }
                    members += 1
                } else if let filled = value(path) ?? fields[index].value {
                    Self.writeKey(fields[index].name, after: members, to: &bytes)
                    filled.write(to: &bytes)
                    members += 1
                } else if fields[index].required {
                    throw IDXUnanswerable(reason: .noValue, path: path)
                }
            }
        }
        bytes.append(UInt8(ascii: "}"))
        return members
    }

    /// `"name":`, after a comma when members come before it.
    private static func writeKey(_ name: String, after members: Int, to bytes: inout [UInt8]) {
        if members > 0 { bytes.append(UInt8(ascii: ",")) }
        bytes.append(UInt8(ascii: "\""))
        JSONValue.appendEscaped(name, to: &bytes)
        bytes.append(UInt8(ascii: "\""))
        bytes.append(UInt8(ascii: ":"))
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
