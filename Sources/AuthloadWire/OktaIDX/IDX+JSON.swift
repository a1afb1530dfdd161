import AuthloadCore

// ION serialization of the IDX values, for the staging service; `init?(json:)` reads what these write.

extension IDXMessage {
    public var json: JSONValue {
        ["message": .string(text), "i18n": ["key": .string(key)], "class": .string(level)]
    }

    /// The ION `messages` object around `messages`.
    public static func ion(_ messages: [IDXMessage]) -> JSONValue {
        ["type": "array", "value": .array(messages.map(\.json))]
    }
}

extension IDXField {
    public var json: JSONValue {
        var object = JSONObject()
        object.set("name", .string(name))
        if let label { object.set("label", .string(label)) }
        if let type { object.set("type", .string(type)) }
        if required { object.set("required", true) }
        if secret { object.set("secret", true) }
        if let visible { object.set("visible", .bool(visible)) }
        if let mutable { object.set("mutable", .bool(mutable)) }
        if let value { object.set("value", value) }
        if let form { object.set("form", ["value": .array(form.map(\.json))]) }
        if !options.isEmpty { object.set("options", .array(options.map(\.json))) }
        if !messages.isEmpty { object.set("messages", IDXMessage.ion(messages)) }
        return .object(object)
    }
}

extension IDXOption {
    public var json: JSONValue {
        var object = JSONObject()
        object.set("label", .string(label))
        object.set("value", form.isEmpty ? (value ?? .null) : ["form": ["value": .array(form.map(\.json))]])
        if let relatesTo { object.set("relatesTo", .string(relatesTo)) }
        return .object(object)
    }
}

extension IDXRemediation {
    public var json: JSONValue {
        var object = JSONObject()
        object.set("rel", ["create-form"])
        object.set("name", .string(name))
        if !relatesTo.isEmpty { object.set("relatesTo", .array(relatesTo.map(JSONValue.string))) }
        object.set("href", .string(href))
        object.set("method", .string(method))
        if let produces { object.set("produces", .string(produces)) }
        object.set("value", .array(fields.map(\.json)))
        if let accepts { object.set("accepts", .string(accepts)) }
        if let refresh {
            let millis = refresh.components.seconds * 1000 + refresh.components.attoseconds / 1_000_000_000_000_000
            object.set("refresh", .number(Double(millis)))
        }
        return .object(object)
    }
}
