import AuthloadCore

extension HTTPResponse {
    /// Appends the response in HTTP/1.1 wire format, framing the body itself.
    ///
    /// `Content-Length` comes from the body (any in the headers is replaced); a `Transfer-Encoding`
    /// header asks for chunked framing instead. `1xx`, `204` and `304` responses get neither and no body,
    /// as RFC 9110 requires. When `keepAlive` is false any `Connection` header is replaced by
    /// `Connection: close`. `timing` is not written: it describes the exchange, not the message.
    ///
    /// ```swift
    /// var out: [UInt8] = []
    /// HTTPResponse(status: 200, headers: ["Content-Type": "application/json"], body: json)
    ///     .serialize(into: &out, keepAlive: keepAlive)
    /// ```
    ///
    /// - Parameters:
    ///   - buffer: Where the bytes go; existing contents are kept.
    ///   - keepAlive: Whether the server will read another request on this connection.
    ///   - respondingToHEAD: Writes the framing headers a GET would get, but not the body.
    public func serialize(into buffer: inout [UInt8], keepAlive: Bool, respondingToHEAD: Bool = false) {
        buffer.reserveCapacity(buffer.count + 128 + body.count)
        buffer.append(ascii: "HTTP/1.1 ")
        buffer.appendDecimal(status)
        buffer.append(ASCII.space)
        buffer.appendFieldText(reason)
        buffer.appendCRLF()

        // Straight from the headers' bytes, as the request's serializer does: no String per field.
        var chunked = false
        headers.forEachField { name, value in
            if ASCII.equalsIgnoringCase(name, "content-length") { return }
            if ASCII.equalsIgnoringCase(name, "transfer-encoding") {
                chunked = true
                return
            }
            if !keepAlive, ASCII.equalsIgnoringCase(name, "connection") { return }
            buffer.appendField(name: name, value: value)
        }
        if !keepAlive { buffer.append(ascii: "Connection: close\r\n") }

        let mayHaveBody = status >= 200 && status != 204 && status != 304
        guard mayHaveBody else { return buffer.appendCRLF() }
        if chunked {
            buffer.append(ascii: "Transfer-Encoding: chunked\r\n\r\n")
            if !respondingToHEAD { buffer.appendChunked(body) }
            return
        }
        buffer.append(ascii: "Content-Length: ")
        buffer.appendDecimal(body.count)
        buffer.appendCRLF()
        buffer.appendCRLF()
        if !respondingToHEAD { buffer.append(contentsOf: body) }
    }
}
