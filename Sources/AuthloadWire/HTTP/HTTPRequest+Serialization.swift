import AuthloadCore

extension HTTPRequest {
    /// Methods whose requests carry a body by convention, so servers expect `Content-Length` even when it is 0.
    private static func expectsBody(_ method: String) -> Bool {
        method == "POST" || method == "PUT" || method == "PATCH"
    }

    /// Appends the request in HTTP/1.1 wire format, framing the body itself.
    ///
    /// `Host` is written first unless the headers already have one. Any `Content-Length` in the
    /// headers is replaced by the body's real length, written when there is a body or the method is
    /// POST, PUT or PATCH. A `Transfer-Encoding` header asks for chunked framing instead: it is written
    /// as `Transfer-Encoding: chunked` and the body as one chunk, never together with `Content-Length`.
    /// Header text is written as given, except that bytes which could end a line early are replaced.
    ///
    /// ```swift
    /// var out: [UInt8] = []
    /// HTTPRequest(method: "POST", target: "/login", body: Array("a=b".utf8))
    ///     .serialize(into: &out, host: endpoint.hostHeader)
    /// ```
    ///
    /// - Parameters:
    ///   - buffer: Where the bytes go; existing contents are kept.
    ///   - host: The `Host` value, such as `Endpoint.hostHeader`.
    public func serialize(into buffer: inout [UInt8], host: String) {
        buffer.reserveCapacity(buffer.count + 128 + target.utf8.count + body.count)
        buffer.appendToken(method)
        buffer.append(ASCII.space)
        buffer.appendTarget(target)
        buffer.append(ascii: " HTTP/1.1\r\n")
        if !headers.contains("host") {
            buffer.appendField("Host", host)
        }

        // Straight from the headers' bytes: a request is serialized per send, and Strings would only be thrown away.
        var chunked = false
        headers.forEachField { name, value in
            if ASCII.equalsIgnoringCase(name, "content-length") { return }
            if ASCII.equalsIgnoringCase(name, "transfer-encoding") {
                chunked = true
                return
            }
            buffer.appendField(name: name, value: value)
        }

        if chunked {
            buffer.append(ascii: "Transfer-Encoding: chunked\r\n\r\n")
            buffer.appendChunked(body)
            return
        }
        if !body.isEmpty || Self.expectsBody(method) {
            buffer.append(ascii: "Content-Length: ")
            buffer.appendDecimal(body.count)
            buffer.appendCRLF()
        }
        buffer.appendCRLF()
        buffer.append(contentsOf: body)
    }
}
