import AuthloadCore

// Reading the IDX values straight from an ION body's bytes with ``JSONReader``: a client reads an ION state at
// every step, and a tree of its few hundred values made only to be picked apart cost more than the rest of the
// step. The rules are those of reading the tree: a member of the wrong type counts as absent, an entry that is
// not an object (or lacks what it must have) is dropped, and a body that is not valid JSON reads as nothing.

extension IDXResponse {
    /// Fills in what an ION state says; false when it is not an object.
    mutating func read(_ reader: inout JSONReader) throws(JSONParseError) -> Bool {
        // `currentAuthenticatorEnrollment.value` wins over `currentAuthenticator.value` whenever it is there, even
        // when it is no authenticator: each is written in place when found, the latter only while the former is not.
        // (Two optionals kept aside were moved about the loop at every member.)
        var enrolled = false
        let isObject = try reader.readMembers(into: &self) { reader, key, response throws(JSONParseError) in
            switch key {
            // Checked, and kept where they lie when they are strings, for IDXResponse to decode if asked.
            case "stateHandle": response.stateHandleValue = try reader.skipped(if: .string)
            case "expiresAt": response.expiresAtValue = try reader.skipped(if: .string)
            case "remediation": response.remediations = try reader.ionCollection(IDXRemediation.read)
            case "messages": response.messages = try IDXMessage.readList(&reader)
            case "successWithInteractionCode": response.success = try IDXRemediation.read(&reader)
            case "currentAuthenticatorEnrollment":
                if let found = try reader.member("value", IDXAuthenticator.read) {
                    response.currentAuthenticator = found
                    enrolled = true
                }
            case "currentAuthenticator":
                if let found = try reader.member("value", IDXAuthenticator.read), !enrolled { response.currentAuthenticator = found }
            // Checked and skipped, and where they lie kept, for IDXResponse.authenticators to read if asked.
            case "authenticators": response.authenticatorsValue = try reader.skipped()
            case "authenticatorEnrollments": response.enrollmentsValue = try reader.skipped()
            default: try reader.skip()
            }
        }
        return isObject
    }
}

extension IDXMessage {
    /// Reads the `value` array of an ION `messages` object; entries without a key keep their text as key.
    static func readList(_ reader: inout JSONReader) throws(JSONParseError) -> [IDXMessage] {
        try reader.ionCollection { reader throws(JSONParseError) in
            var text = ""
            var level: String?
            var key: String?
            let isObject = try reader.readMembers { reader, member throws(JSONParseError) in
                switch member {
                case "message": text = try reader.string() ?? ""
                case "class": level = try reader.string()
                case "i18n": key = try reader.member("key") { reader throws(JSONParseError) in try reader.string() } ?? nil
                default: try reader.skip()
                }
            }
            return isObject ? IDXMessage(level: level ?? "INFO", key: key ?? text, text: text) : nil
        }
    }
}

extension IDXRemediation {
    /// Reads a remediation form; nil when it is not an object or lacks its name or href.
    static func read(_ reader: inout JSONReader) throws(JSONParseError) -> IDXRemediation? {
        var remediation = IDXRemediation(unread: ())
        // A remediation without its name or href is dropped. Both are read in place, as a field's name is.
        var (named, located) = (false, false)
        try reader.readMembers(into: &remediation) { reader, key, remediation throws(JSONParseError) in
            switch key {
            case "name":
                if let name = try reader.idxString() {
                    remediation.name = name
                    named = true
                }
            case "href":
                if let href = try reader.string() {
                    remediation.href = href
                    located = true
                }
            case "method": remediation.method = try reader.string() ?? "POST"
            case "accepts": remediation.accepts = try reader.idxString()
            case "produces": remediation.produces = try reader.idxString()
            case "relatesTo": remediation.relatesTo = try reader.list { reader throws(JSONParseError) in try reader.idxString() } ?? []
            case "value": remediation.fields = try reader.list(IDXField.read) ?? []
            case "refresh": remediation.refresh = try reader.int().map { .milliseconds($0) }
            default: try reader.skip()
            }
        }
        return named && located ? remediation : nil
    }
}

extension IDXField {
    /// Reads a form field; nil when it is not an object or has no name.
    static func read(_ reader: inout JSONReader) throws(JSONParseError) -> IDXField? {
        var field = IDXField(unread: ())
        // Whether it has a name, its name read in place: a name kept aside and set after the read made the compiler
        // copy the whole field, every member retained, to return it.
        var named = false
        try reader.readMembers(into: &field) { reader, key, field throws(JSONParseError) in
            switch key {
            case "name":
                if let name = try reader.idxString() {
                    field.name = name
                    named = true
                }
            case "label": field.label = try reader.idxString()
            case "type": field.type = try reader.string()
            case "required": field.required = try reader.bool() ?? false
            case "secret": field.secret = try reader.bool() ?? false
            case "visible": field.visible = try reader.bool()
            case "mutable": field.mutable = try reader.bool()
            case "value": field.value = try reader.value()
            case "form": field.form = try reader.member("value") { reader throws(JSONParseError) in try reader.list(IDXField.read) } ?? nil
            case "options": field.options = try reader.list(IDXOption.read) ?? []
            case "messages": field.messages = try IDXMessage.readList(&reader)
            default: try reader.skip()
            }
        }
        return named ? field : nil
    }
}

extension IDXOption {
    /// Reads an option: a scalar value, or a `value` of `{"form": {"value": [...]}}`; nil when it is not an object.
    static func read(_ reader: inout JSONReader) throws(JSONParseError) -> IDXOption? {
        var option = IDXOption(unread: ())
        let isObject = try reader.readMembers(into: &option) { reader, key, option throws(JSONParseError) in
            switch key {
            case "label": option.label = try reader.string() ?? ""
            case "relatesTo": option.relatesTo = try reader.idxString()
            case "value":
                let start = reader.offset
                guard try reader.kind() == .object else {
                    option.value = try reader.value()
                    return
                }
                var form: [IDXField]?
                try reader.readMembers { reader, key throws(JSONParseError) in
                    guard key == "form" else { return try reader.skip() }
                    form = try reader.member("value") { reader throws(JSONParseError) in try reader.list(IDXField.read) } ?? nil
                }
                // An object that is no form is the option's value as it stands.
                if let form { option.form = form } else { option.value = try reader.value(since: start) }
            default: try reader.skip()
            }
        }
        return isObject ? option : nil
    }
}

extension IDXAuthenticator {
    /// Reads an authenticator; nil when it is not an object or has no type.
    static func read(_ reader: inout JSONReader) throws(JSONParseError) -> IDXAuthenticator? {
        var authenticator = IDXAuthenticator(unread: ())
        // Its type read in place, as a field's name is.
        var typed = false
        try reader.readMembers(into: &authenticator) { reader, key, authenticator throws(JSONParseError) in
            switch key {
            case "type":
                if let type = try reader.idxString() {
                    authenticator.type = type
                    typed = true
                }
            case "id": authenticator.id = try reader.string()
            case "key": authenticator.key = try reader.idxString()
            case "methods":
                authenticator.methods =
                    try reader.list { reader throws(JSONParseError) in
                        try reader.member("type") { reader throws(JSONParseError) in try reader.string() } ?? nil
                    } ?? []
            case "profile":
                authenticator.questionKey =
                    try reader.member("questionKey") { reader throws(JSONParseError) in try reader.string() } ?? nil
            default: try reader.skip()
            }
        }
        return typed ? authenticator : nil
    }
}

extension JSONReader {
    /// The strings longer than a small string that ION states repeat (media types, remediation names, the paths of
    /// `relatesTo`, labels), each read as the one literal rather than made anew at every answer.
    static let idxStrings = JSONKnownStrings([
        "application/ion+json; okta-version=1.0.0", "application/json; okta-version=1.0.0", "application/x-www-form-urlencoded",
        "challenge-authenticator", "select-authenticator-authenticate", "select-authenticator-enroll", "enroll-authenticator",
        "authenticator-verification-data", "authenticator-enrollment-data", "select-enroll-profile", "identify-recovery",
        "$.currentAuthenticatorEnrollment", "$.currentAuthenticator", "$.authenticatorEnrollments.value[0]",
        "$.authenticatorEnrollments.value[1]", "$.authenticatorEnrollments.value[2]", "$.authenticatorEnrollments.value[3]",
        "$.authenticators.value[0]", "$.authenticators.value[1]", "$.authenticators.value[2]", "$.authenticators.value[3]",
        "interaction_code", "Remember this device", "security_question"
    ])

    /// Checks the next value and moves past it; returns where it lies.
    mutating func skipped() throws(JSONParseError) -> Range<Int> {
        let start = offset
        try skip()
        return start..<offset
    }

    /// Checks the next value and moves past it; returns where it lies when it is of `kind`, nil when not.
    mutating func skipped(if kind: Kind) throws(JSONParseError) -> Range<Int>? {
        let matches = try self.kind() == kind
        let range = try skipped()
        return matches ? range : nil
    }

    /// The next value when it is a string, one of ``idxStrings`` when it equals one.
    mutating func idxString() throws(JSONParseError) -> String? {
        try string(known: Self.idxStrings)
    }

    /// The elements of the next value read by `element`, those it answers nil for dropped; nil when it is no array.
    mutating func list<T>(_ element: (inout JSONReader) throws(JSONParseError) -> T?) throws(JSONParseError) -> [T]? {
        var elements: [T] = []
        let isArray = try readElements(into: &elements) { reader, elements throws(JSONParseError) in
            guard let read = try element(&reader) else { return }
            // Room for a form's few fields at once: grown one by one, a list of three is allocated three times.
            if elements.capacity == 0 { elements.reserveCapacity(4) }
            elements.append(read)
        }
        return isArray ? elements : nil
    }

    /// The `value` array of the ION collection next (`{"type": "array", "value": [...]}`), read as by ``list(_:)``;
    /// empty when there is none.
    mutating func ionCollection<T>(_ element: (inout JSONReader) throws(JSONParseError) -> T?) throws(JSONParseError) -> [T] {
        let elements = try member("value") { reader throws(JSONParseError) in try reader.list(element) }
        return (elements ?? nil) ?? []
    }

    /// The member `name` of the object next, read by `read`; nil when the value is no object or has no such member.
    mutating func member<T>(_ name: StaticString, _ read: (inout JSONReader) throws(JSONParseError) -> T) throws(JSONParseError) -> T? {
        var found: T?
        try readMembers { reader, key throws(JSONParseError) in
            if key == name { found = try read(&reader) }
        }
        return found
    }
}

// The values ``read(_:)`` fills in, made empty in place: the public initializers, inlined there, made each of their
// defaults and then copied the whole value, every member retained and released.

extension IDXRemediation {
    /// No name or href yet, no accepts or produces: what a form that says none has.
    fileprivate init(unread: Void) {
        name = ""
        href = ""
        method = "POST"
        relatesTo = []
        fields = []
    }
}

extension IDXField {
    fileprivate init(unread: Void) { name = "" }
}

extension IDXOption {
    fileprivate init(unread: Void) {
        label = ""
        form = []
    }
}

extension IDXAuthenticator {
    fileprivate init(unread: Void) {
        type = ""
        methods = []
    }
}
