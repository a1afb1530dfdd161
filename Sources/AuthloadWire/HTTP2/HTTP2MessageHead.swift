import AuthloadCore

/// Why a request's header block is malformed under RFC 9113 §8.2 and §8.3, naming the field; the server answers
/// with a stream error of type PROTOCOL_ERROR (§8.1.1).
public struct HTTP2MalformedRequest: Error, Sendable, Hashable, CustomStringConvertible {
    /// What is wrong, for callers that classify (the text is for people).
    public enum Reason: Sendable, Hashable, CaseIterable {
        /// A pseudo-header other than `:method`, `:scheme`, `:authority` and `:path`, or one in trailers.
        case unknownPseudoHeader
        /// A pseudo-header after a regular field.
        case pseudoHeaderAfterField
        /// A pseudo-header given twice.
        case duplicatePseudoHeader
        /// `:method`, `:scheme` or `:path` absent or empty (`:authority` for CONNECT).
        case missingPseudoHeader
        /// A field name with upper-case letters, a character a token may not hold, or empty.
        case invalidFieldName
        /// A field value with NUL, CR or LF, or with white space at either end.
        case invalidFieldValue
        /// A connection-specific field (`connection`, `keep-alive`, `transfer-encoding`, …) or `te` other than `trailers`.
        case connectionSpecificField
        /// A `:path` that is neither absolute (`/…`) nor `*` for OPTIONS.
        case invalidPath
        /// The DATA add up to another length than `content-length` says.
        case contentLengthMismatch
    }

    public let reason: Reason
    /// The field the problem is in.
    public let field: String
    public let description: String

    init(_ reason: Reason, _ field: String, _ detail: String) {
        self.reason = reason
        self.field = field
        self.description = "\(detail) (field \(field))"
    }
}

/// Turns header lists into requests and responses into header lists, as RFC 9113 §8.3 sets pseudo-headers out.
enum HTTP2MessageHead {
    /// Fields that belong to one HTTP/1.1 connection and may not appear in HTTP/2 (RFC 9113 §8.2.2).
    static let connectionSpecific: Set<String> = ["connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade"]

    /// The request a client's header block asks for: `:path` as the target, the regular fields as headers, `:authority`
    /// as `host` when the block has none, and the `cookie` fields joined with "; " as §8.2.3 says.
    static func request(from headers: [HPACKHeader]) throws(HTTP2MalformedRequest) -> HTTPRequest {
        var pseudo: [String: String] = [:]
        var fields: [HTTPField] = []
        var cookies: [String] = []
        for header in headers {
            if header.name.hasPrefix(":") {
                guard fields.isEmpty && cookies.isEmpty else {
                    throw HTTP2MalformedRequest(.pseudoHeaderAfterField, header.name, "pseudo-header after a regular field")
                }
                guard [":method", ":scheme", ":authority", ":path"].contains(header.name) else {
                    throw HTTP2MalformedRequest(.unknownPseudoHeader, header.name, "not a request pseudo-header")
                }
                guard pseudo.updateValue(header.value, forKey: header.name) == nil else {
                    throw HTTP2MalformedRequest(.duplicatePseudoHeader, header.name, "pseudo-header given twice")
                }
                try checkValue(header)
                continue
            }
            try checkField(header)
            if header.name == "cookie" { cookies.append(header.value) } else { fields.append(HTTPField(header.name, header.value)) }
        }
        guard let method = pseudo[":method"], !method.isEmpty else {
            throw HTTP2MalformedRequest(.missingPseudoHeader, ":method", "no :method")
        }
        let target: String
        if method == "CONNECT" {
            guard pseudo[":authority"]?.isEmpty == false else {
                throw HTTP2MalformedRequest(.missingPseudoHeader, ":authority", "CONNECT without :authority")
            }
            target = pseudo[":authority"]!
        } else {
            guard pseudo[":scheme"]?.isEmpty == false else { throw HTTP2MalformedRequest(.missingPseudoHeader, ":scheme", "no :scheme") }
            guard let path = pseudo[":path"], !path.isEmpty else {
                throw HTTP2MalformedRequest(.missingPseudoHeader, ":path", "no :path")
            }
            guard path.hasPrefix("/") || (path == "*" && method == "OPTIONS") else {
                throw HTTP2MalformedRequest(.invalidPath, ":path", "\(path) is not an absolute path")
            }
            target = path
        }
        if !cookies.isEmpty { fields.append(HTTPField("cookie", cookies.joined(separator: "; "))) }
        if let authority = pseudo[":authority"], !fields.contains(where: { $0.name == "host" }) {
            fields.insert(HTTPField("host", authority), at: 0)
        }
        return HTTPRequest(method: method, target: target, headers: HTTPHeaders(fields))
    }

    /// Checks the fields of a trailer block, which may hold no pseudo-header.
    static func checkTrailers(_ headers: [HPACKHeader]) throws(HTTP2MalformedRequest) {
        for header in headers {
            if header.name.hasPrefix(":") { throw HTTP2MalformedRequest(.unknownPseudoHeader, header.name, "pseudo-header in trailers") }
            try checkField(header)
        }
    }

    /// The header list of a response: `:status` first, then the response's fields in lower case without the
    /// connection-specific ones, and `content-length` where a body may be.
    static func headers(of response: HTTPResponse, respondingToHEAD: Bool) -> [HPACKHeader] {
        var headers = [HPACKHeader(":status", String(response.status))]
        headers.reserveCapacity(response.headers.count + 2)
        for field in response.headers {
            let name = field.name.lowercased()
            if connectionSpecific.contains(name) || name == "content-length" { continue }
            headers.append(HPACKHeader(name, field.value))
        }
        if response.status >= 200 && response.status != 204 && response.status != 304 {
            headers.append(HPACKHeader("content-length", String(response.body.count)))
        }
        return headers
    }

    private static func checkField(_ header: HPACKHeader) throws(HTTP2MalformedRequest) {
        let name = header.name
        guard !name.isEmpty, name.utf8.allSatisfy({ ASCII.isTokenChar($0) && !($0 >= 0x41 && $0 <= 0x5A) }) else {
            throw HTTP2MalformedRequest(.invalidFieldName, name, "field name is not a lower-case token")
        }
        if connectionSpecific.contains(name) || (name == "te" && header.value != "trailers") {
            throw HTTP2MalformedRequest(.connectionSpecificField, name, "connection-specific field in HTTP/2")
        }
        try checkValue(header)
    }

    private static func checkValue(_ header: HPACKHeader) throws(HTTP2MalformedRequest) {
        let value = header.value.utf8
        let bad = value.contains { $0 == 0 || $0 == 0x0A || $0 == 0x0D }
        let padded = value.first.map(ASCII.isWhitespace) == true || value.last.map(ASCII.isWhitespace) == true
        if bad || padded {
            throw HTTP2MalformedRequest(.invalidFieldValue, header.name, "field value with NUL, CR, LF or white space at an end")
        }
    }
}
