import AuthloadCore

/// What the service reads from an IDX request's JSON body, read straight from its bytes (``JSONReader``): every
/// remediation call sends one, and the service needs a handful of its strings, never a tree.
///
/// A member of another type counts as absent, and a body that is not valid JSON as empty, as reading a tree did.
struct IDXRequestBody {
    var stateHandle: String?
    var interactionHandle: String?
    var identifier: String?
    /// `credentials.passcode`, `credentials.answer`, `credentials.questionKey`.
    var passcode: String?
    var answer: String?
    var questionKey: String?
    /// `authenticator.id` and `authenticator.methodType`: what a select form picked.
    var authenticatorID: String?
    var methodType: String?

    init() {}

    /// Read into `self` in place: read into a local and assigned at the end, the whole body was copied, every string
    /// retained, and the local destroyed.
    init(_ bytes: [UInt8]) {
        do {
            try JSONReader.read(bytes) { reader throws(JSONParseError) in
                try reader.readMembers(into: &self) { reader, key, body throws(JSONParseError) in
                    switch key {
                    case "stateHandle": body.stateHandle = try reader.string()
                    case "interactionHandle": body.interactionHandle = try reader.string()
                    case "identifier": body.identifier = try reader.string()
                    case "credentials":
                        try reader.readMembers(into: &body) { reader, key, body throws(JSONParseError) in
                            switch key {
                            case "passcode": body.passcode = try reader.string()
                            case "answer": body.answer = try reader.string()
                            case "questionKey": body.questionKey = try reader.string()
                            default: try reader.skip()
                            }
                        }
                    case "authenticator":
                        try reader.readMembers(into: &body) { reader, key, body throws(JSONParseError) in
                            switch key {
                            case "id": body.authenticatorID = try reader.string()
                            case "methodType": body.methodType = try reader.string()
                            default: try reader.skip()
                            }
                        }
                    default: try reader.skip()
                    }
                }
            }
        } catch {
            self = IDXRequestBody()
        }
    }
}
