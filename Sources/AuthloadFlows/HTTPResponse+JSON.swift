import AuthloadCore

extension HTTPResponse {
    /// The string member `key` of the body's JSON object: what `(try? JSONValue.parse(body))?[key]?.stringValue`
    /// reads, nil when the body is not JSON, not an object, or has no string there.
    ///
    /// Read with ``JSONReader``, which checks the whole body as ``JSONValue/parse(_:)`` does but builds no tree: a
    /// flow that wants one member of an answer (a session id, a token) paid for a dictionary and a string of each.
    func jsonString(_ key: StaticString) -> String? {
        var found: String?
        do {
            try JSONReader.read(body) { reader throws(JSONParseError) in
                try reader.readMembers { reader, member throws(JSONParseError) in
                    if member == key { found = try reader.string() }
                }
            }
        } catch {
            return nil
        }
        return found
    }
}
