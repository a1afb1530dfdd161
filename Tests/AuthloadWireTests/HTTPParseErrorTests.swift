import AuthloadCore
import Testing

@testable import AuthloadWire

/// One malformed message, the side that reads it, and exactly what the parser must say about it.
struct ErrorCase: Sendable, CustomTestStringConvertible {
    enum Side: Sendable { case client, server }

    var side: Side
    var message: [UInt8]
    var endOfStream = false
    var maxHeaderBytes = 64 * 1024
    var maxBodyBytes = 16 * 1024 * 1024
    var kind: HTTPParseError.Kind
    var description: String
    var status = 400

    var testDescription: String { description }

    /// Parses the message in one piece, or in the given pieces, and returns the error (nil if none).
    func error(pieces: [Range<Int>]? = nil) -> HTTPParseError? {
        switch side {
        case .client:
            parseResponses(message, pieces: pieces, endOfStream: endOfStream, maxHeaderBytes: maxHeaderBytes, maxBodyBytes: maxBodyBytes)
                .error
        case .server:
            parseRequests(message, pieces: pieces, endOfStream: endOfStream, maxHeaderBytes: maxHeaderBytes, maxBodyBytes: maxBodyBytes)
                .error
        }
    }

    static func client(_ text: String, _ kind: HTTPParseError.Kind, _ description: String, status: Int = 400) -> Self {
        Self(side: .client, message: wire(text), kind: kind, description: description, status: status)
    }

    static func server(_ text: String, _ kind: HTTPParseError.Kind, _ description: String, status: Int = 400) -> Self {
        Self(side: .server, message: wire(text), kind: kind, description: description, status: status)
    }

    func closed() -> Self { with { $0.endOfStream = true } }
    func limits(header: Int? = nil, body: Int? = nil) -> Self {
        with {
            if let header { $0.maxHeaderBytes = header }
            if let body { $0.maxBodyBytes = body }
        }
    }

    private func with(_ change: (inout Self) -> Void) -> Self {
        var copy = self
        change(&copy)
        return copy
    }

    static let chunkedHead = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" // 47 bytes
    static let longValue = String(repeating: "a", count: 100)

    static let all: [ErrorCase] = [
        // Status lines
        .client("HTPT/1.1 200 OK\r\n\r\n", .malformedStartLine, "malformed status line at byte 0: expected 'HTTP/1.x'"),
        .client("HTTP/1.1\r\n\r\n", .malformedStartLine, "malformed status line at byte 8: expected a space after the version"),
        .client("HTTP/1.1 20 OK\r\n\r\n", .malformedStartLine, "malformed status line at byte 9: expected a three-digit status code"),
        .client("HTTP/1.1 099 Low\r\n\r\n", .malformedStartLine, "malformed status line at byte 9: expected a three-digit status code"),
        .client("HTTP/1.1 200OK\r\n\r\n", .malformedStartLine, "malformed status line at byte 12: expected a space after the status code"),
        .client(
            "HTTP/1.1 200 O\u{7}K\r\n\r\n", .malformedStartLine,
            "malformed status line at byte 14: expected a reason phrase without control characters"),
        .client("HTTP/2 200 OK\r\n\r\n", .unsupportedVersion, "unsupported HTTP version 'HTTP/2' at byte 0", status: 505),
        // Request lines
        .server("/ HTTP/1.1\r\n\r\n", .malformedStartLine, "malformed request line at byte 0: expected a method followed by a space"),
        .server(
            "GET  / HTTP/1.1\r\n\r\n", .malformedStartLine,
            "malformed request line at byte 4: expected a request target followed by a space"),
        .server(
            "GET /a\u{7F}b HTTP/1.1\r\n\r\n", .malformedStartLine,
            "malformed request line at byte 6: expected a request target followed by a space"),
        .server("GET / HTTP/1.1 x\r\n\r\n", .malformedStartLine, "malformed request line at byte 6: expected 'HTTP/1.x'"),
        .server("GET / HTTP/2.0\r\n\r\n", .unsupportedVersion, "unsupported HTTP version 'HTTP/2.0' at byte 6", status: 505),
        // Header fields
        .client(
            "HTTP/1.1 200 OK\r\nBad Name: x\r\n\r\n", .malformedHeader, "malformed header field at byte 20: invalid character in field name"
        ),
        .client("HTTP/1.1 200 OK\r\nNoColon\r\n\r\n", .malformedHeader, "malformed header field at byte 17: no ':' after the field name"),
        .client("HTTP/1.1 200 OK\r\n: x\r\n\r\n", .malformedHeader, "malformed header field at byte 17: empty field name"),
        .client(
            "HTTP/1.1 200 OK\r\nX: a\u{1}b\r\n\r\n", .malformedHeader, "malformed header field at byte 21: invalid character in field value"
        ),
        .client(
            "HTTP/1.1 200 OK\r\nX: a\rb\r\n\r\n", .malformedHeader, "malformed header field at byte 21: invalid character in field value"),
        .client(
            "HTTP/1.1 200 OK\r\nA: b\r\n c\r\n\r\n", .obsoleteLineFolding,
            "obsolete line folding at byte 23: header lines must not start with whitespace"),
        .server(
            "GET / HTTP/1.1\r\n\tHost: a\r\n\r\n", .obsoleteLineFolding,
            "obsolete line folding at byte 16: header lines must not start with whitespace"),
        // Content-Length
        .client("HTTP/1.1 200 OK\r\nContent-Length: 12a\r\n\r\n", .invalidContentLength, "Content-Length '12a' at byte 17 is not a number"),
        .client("HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", .invalidContentLength, "Content-Length '-1' at byte 17 is not a number"),
        .client("HTTP/1.1 200 OK\r\nContent-Length: \r\n\r\n", .invalidContentLength, "Content-Length '' at byte 17 is not a number"),
        .client(
            "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n", .conflictingContentLength,
            "conflicting Content-Length values '5' and '6' at byte 36"),
        .server(
            "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3, 4\r\n\r\n", .conflictingContentLength,
            "conflicting Content-Length values '3' and '4' at byte 26"),
        // Transfer-Encoding (requests are strict: ambiguous framing is how requests are smuggled)
        .server(
            "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n", .invalidTransferEncoding,
            "invalid Transfer-Encoding at byte 45: both Transfer-Encoding and Content-Length are present"),
        .server(
            "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked, gzip\r\n\r\n", .invalidTransferEncoding,
            "invalid Transfer-Encoding at byte 26: chunked must be the final coding"),
        .server(
            "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n", .invalidTransferEncoding,
            "invalid Transfer-Encoding at byte 26: chunked is applied more than once"),
        .server(
            "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: \r\n\r\n", .invalidTransferEncoding,
            "invalid Transfer-Encoding at byte 26: no transfer coding is named"),
        .server(
            "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", .unsupportedTransferEncoding,
            "unsupported transfer coding 'gzip' at byte 26", status: 501),
        // Chunks
        .client(chunkedHead + "zz\r\n", .invalidChunkSize, "invalid chunk size at byte 47: 'zz' is not hexadecimal"),
        .client(chunkedHead + ";x\r\n", .invalidChunkSize, "invalid chunk size at byte 47: ';x' is not hexadecimal"),
        .client(chunkedHead + "1000000000000000\r\n", .invalidChunkSize, "invalid chunk size at byte 47: chunk size too large"),
        .client(chunkedHead + "5 x\r\n", .invalidChunkSize, "invalid chunk size at byte 49: unexpected character after the chunk size"),
        .client(chunkedHead + "5;a\u{1}\r\n", .invalidChunkSize, "invalid chunk size at byte 50: invalid character in chunk extension"),
        .client(
            chunkedHead + "1;" + String(repeating: "e", count: 5000) + "\r\n", .invalidChunkSize,
            "invalid chunk size at byte 4143: chunk size line longer than 4096 bytes"),
        .client(chunkedHead + "5\r\nhelloX", .malformedChunk, "malformed chunk at byte 55: expected CRLF after chunk data"),
        .client(
            chunkedHead + "5\r\nhello\rX", .malformedChunk, "malformed chunk at byte 56: expected LF after CR at the end of chunk data"),
        .client(
            chunkedHead + "0\r\nBad Trailer: x\r\n\r\n", .malformedHeader,
            "malformed header field at byte 53: invalid character in field name"),
        // Limits
        .client(
            "HTTP/1.1 200 OK\r\nX: \(longValue)\r\n\r\n", .headerTooLarge, "header section larger than 64 bytes at byte 64", status: 431
        )
        .limits(header: 64),
        .server("GET /\(longValue) HTTP/1.1\r\n\r\n", .headerTooLarge, "header section larger than 64 bytes at byte 64", status: 431)
            .limits(header: 64),
        .client(
            chunkedHead + "0\r\nT: \(longValue)\r\n\r\n", .headerTooLarge, "trailer section larger than 64 bytes at byte 114", status: 431
        )
        .limits(header: 64),
        .client("HTTP/1.1 200 OK\r\nContent-Length: 11\r\n\r\n", .bodyTooLarge, "body larger than 10 bytes at byte 17", status: 413)
            .limits(body: 10),
        .client(
            "HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999999\r\n\r\n", .bodyTooLarge,
            "body larger than 16777216 bytes at byte 17", status: 413),
        .client(chunkedHead + "6\r\nhello!\r\nb\r\n", .bodyTooLarge, "body larger than 10 bytes at byte 58", status: 413)
            .limits(body: 10),
        .client("HTTP/1.0 200 OK\r\n\r\n" + longValue, .bodyTooLarge, "body larger than 10 bytes at byte 29", status: 413)
            .limits(body: 10),
        .server(
            "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 11\r\n\r\n", .bodyTooLarge, "body larger than 10 bytes at byte 26", status: 413
        )
        .limits(body: 10),
        // Truncation
        .client("HTTP/1.1 2", .truncated, "stream ended mid-message at byte 10: expected the rest of the status line").closed(),
        .client("HTTP/1.1 200 OK\r\nA: b", .truncated, "stream ended mid-message at byte 21: expected the rest of the header section")
            .closed(),
        .client(
            "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc", .truncated,
            "stream ended mid-message at byte 42: expected 7 more body bytes"
        ).closed(),
        .client(chunkedHead + "5\r\nhel", .truncated, "stream ended mid-message at byte 53: expected 2 more chunk bytes").closed(),
        .client(chunkedHead + "5\r\nhello", .truncated, "stream ended mid-message at byte 55: expected CRLF after chunk data").closed(),
        .client(chunkedHead + "5\r\nhello\r\n", .truncated, "stream ended mid-message at byte 57: expected a chunk size").closed(),
        .client(chunkedHead + "0\r\n", .truncated, "stream ended mid-message at byte 50: expected the end of the trailer section").closed(),
        .server("GET / HT", .truncated, "stream ended mid-message at byte 8: expected the rest of the request line").closed(),
        .server(
            "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 4\r\n\r\nab", .truncated,
            "stream ended mid-message at byte 49: expected 2 more body bytes"
        ).closed(),
        // Host
        .server("GET / HTTP/1.1\r\n\r\n", .invalidHost, "missing Host header in an HTTP/1.1 request at byte 16"),
        .server("GET / HTTP/1.1\r\nHost: a\r\nhost: b\r\n\r\n", .invalidHost, "more than one Host header at byte 25")
    ]
}

@Suite("Parse errors")
struct HTTPParseErrorTests {
    @Test("name the problem and the byte offset, with the status a server should answer", arguments: ErrorCase.all)
    func errorMessages(_ errorCase: ErrorCase) throws {
        let error = try #require(errorCase.error())
        #expect(error.kind == errorCase.kind)
        #expect(error.description == errorCase.description)
        #expect(error.suggestedStatus == errorCase.status)
        #expect(error.description.contains("at byte \(error.offset)"))
    }

    @Test("are the same whether the message arrives whole or one byte at a time", arguments: ErrorCase.all)
    func errorsDoNotDependOnFeeding(_ errorCase: ErrorCase) throws {
        let whole = errorCase.error()
        let byByte = errorCase.error(pieces: pieces(errorCase.message.count, size: 1))
        #expect(byByte == whole)
    }

    @Test("cover every kind of error")
    func everyKindIsTested() {
        let tested = Set(ErrorCase.all.map(\.kind))
        #expect(tested == Set(HTTPParseError.Kind.allCases))
    }

    @Test("count offsets from the start of the failing message, not of the connection")
    func offsetsArePerMessage() throws {
        let first = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
        let outcome = parseResponses(wire(first + ErrorCase.chunkedHead + "zz\r\n"))
        #expect(outcome.events.count == 1)
        #expect(outcome.error?.description == "invalid chunk size at byte 47: 'zz' is not hexadecimal")
    }

    @Test("quote peer bytes escaped and shortened, so logs stay one readable line")
    func quoting() {
        #expect(HTTPParseError.quoted(wire("a'b\\c\r\n")[...]) == #"'a\x27b\x5Cc\x0D\x0A'"#)
        #expect(HTTPParseError.quoted(ArraySlice(repeating: 0x41, count: 40)) == "'" + String(repeating: "A", count: 32) + "…'")
        #expect(HTTPParseError.quoted([0xFF, 0x00][...]) == #"'\xFF\x00'"#)
    }
}
