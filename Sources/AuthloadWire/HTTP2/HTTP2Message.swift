import AuthloadCore

extension HTTPRequest {
    /// Header fields an HTTP/2 request must not carry (RFC 9113 §8.2.2): they describe an HTTP/1.1 connection, and
    /// `host` travels as `:authority`. Lowercase, as HTTP/2 field names are.
    static let connectionSpecificFields: Set<String> = [
        "connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade", "host", "content-length"
    ]

    /// The request as an HTTP/2 header list (RFC 9113 §8.3.1): the pseudo-fields first, then its fields with their
    /// names lowercased, less those of an HTTP/1.1 connection, and `content-length` when a body goes with it or the
    /// method expects one (as the HTTP/1.1 serialization writes it).
    ///
    /// Every field may enter the HPACK dynamic table, so a flow's repeated `authorization`, cookie and `user-agent` cost
    /// a byte or two after the first request, as they do from an app's HTTP/2 stack; `content-length`, which changes
    /// from request to request, stays out of the table.
    ///
    /// - Parameters:
    ///   - authority: the `:authority`, such as `Endpoint.hostHeader`; a `Host` field of the request wins over it.
    ///   - scheme: `https` or `http`.
    public func http2Fields(authority: String, scheme: String) -> [HPACKHeader] {
        var fields: [HPACKHeader] = []
        fields.reserveCapacity(5 + headers.count)
        fields.append(HPACKHeader(":method", method))
        fields.append(HPACKHeader(":scheme", scheme))
        fields.append(HPACKHeader(":authority", headers["host"] ?? authority))
        fields.append(HPACKHeader(":path", target.isEmpty ? "/" : target))
        for field in headers {
            let name = field.name.lowercased()
            if Self.connectionSpecificFields.contains(name) { continue }
            // TE may only say "trailers" on HTTP/2.
            if name == "te" && !field.value.caseInsensitiveEquals("trailers") { continue }
            fields.append(HPACKHeader(name, field.value))
        }
        if !body.isEmpty || method == "POST" || method == "PUT" || method == "PATCH" {
            fields.append(HPACKHeader("content-length", String(body.count), indexing: .withoutIndexing))
        }
        return fields
    }
}

/// Why a header list from the server is no HTTP/2 response (RFC 9113 §8.3.2).
public enum HTTP2ResponseProblem: Error, Sendable, Hashable, CustomStringConvertible {
    /// No `:status`, or one that is not three digits.
    case missingStatus
    /// A pseudo-field a response may not have, or one after a regular field.
    case misplacedPseudoField(String)

    public var description: String {
        switch self {
        case .missingStatus: "response without a valid :status"
        case .misplacedPseudoField(let name): "response with pseudo-field \(name) misplaced"
        }
    }
}

extension HTTPResponse {
    /// The response head an HTTP/2 header block carries, without a body; its version is ``HTTPVersion/http2``.
    ///
    /// - Throws: ``HTTP2ResponseProblem`` for a block that is no response head (RFC 9113 §8.3.2: a malformed message,
    ///   which the caller treats as a stream error of type PROTOCOL_ERROR).
    public init(http2Fields fields: [HPACKHeader]) throws(HTTP2ResponseProblem) {
        var status: Int?
        // The fields laid out back to back in one block, as `HTTPHeaders.add` would, but with room made once.
        var section: [UInt8] = []
        var spans: [HTTPHeaders.Span] = []
        section.reserveCapacity(fields.reduce(0) { $0 + $1.name.utf8.count + $1.value.utf8.count })
        spans.reserveCapacity(fields.count)
        for field in fields {
            if field.name.utf8.first == UInt8(ascii: ":") {
                guard field.name == ":status", spans.isEmpty, status == nil else { throw .misplacedPseudoField(field.name) }
                guard field.value.utf8.count == 3, let code = Int(field.value), code >= 100 else { throw .missingStatus }
                status = code
            } else {
                let nameStart = section.count
                section.append(contentsOf: field.name.utf8)
                let valueStart = section.count
                section.append(contentsOf: field.value.utf8)
                spans.append(HTTPHeaders.Span(name: nameStart..<valueStart, value: valueStart..<section.count))
            }
        }
        guard let status else { throw .missingStatus }
        self.init(status: status, headers: HTTPHeaders(section: section, fields: spans))
        version = .http2
    }
}
