import Testing

@testable import AuthloadWire

/// One malformed stream, the limits it is read with, and exactly what the decoder must say about it.
struct StompErrorCase: Sendable, CustomTestStringConvertible {
    var bytes: [UInt8]
    var kind: StompError.Kind
    var description: String
    var maxHeaderBytes = 64 * 1024
    var maxBodyBytes = 1 << 20

    var testDescription: String { description }

    init(_ text: String, _ kind: StompError.Kind, _ description: String, maxHeaderBytes: Int = 64 * 1024, maxBodyBytes: Int = 1 << 20) {
        bytes = stompBytes(text)
        self.kind = kind
        self.description = description
        self.maxHeaderBytes = maxHeaderBytes
        self.maxBodyBytes = maxBodyBytes
    }

    func error(pieces: [Range<Int>]? = nil) -> StompError? {
        stompDecode(bytes, pieces: pieces, maxHeaderBytes: maxHeaderBytes, maxBodyBytes: maxBodyBytes).error
    }

    static let long = String(repeating: "a", count: 100)

    static let all: [StompErrorCase] = [
        // Commands
        .init("FOO\n\n\0", .unknownCommand, "unknown command 'FOO' at byte 0"),
        .init("send\n\n\0", .unknownCommand, "unknown command 'send' at byte 0"),
        .init("\n\r\nSEND \n\n\0", .unknownCommand, "unknown command 'SEND ' at byte 0"),
        .init("SEND\n\n\0\nGET / HTTP/1.1\r\n", .unknownCommand, "unknown command 'GET / HTTP/1.1' at byte 0"),
        .init("\u{1}\u{FF}\n", .unknownCommand, "unknown command '\\x01\\xC3\\xBF' at byte 0"),
        // Line endings
        .init("\rX", .invalidLineEnding, "CR not followed by LF at byte 0"),
        .init("SE\rND\n\n\0", .invalidLineEnding, "CR not followed by LF at byte 2"),
        .init("SEND\r\nfoo:b\rar\n\n\0", .invalidLineEnding, "CR not followed by LF at byte 11"),
        // NUL in the head
        .init("DISCONNECT\n\0", .unexpectedNul, "NUL before the end of the header section at byte 11"),
        .init("\0", .unexpectedNul, "NUL before the end of the header section at byte 0"),
        // Header lines
        .init("SEND\ndestination\n\n\0", .malformedHeader, "malformed header at byte 5: no ':' after the header name"),
        .init("SEND\n:x\n\n\0", .malformedHeader, "malformed header at byte 5: empty header name"),
        // Escapes (offsets point at the backslash, counted from the frame that holds it)
        .init("SEND\nfoo:a\\tb\n\n\0", .invalidEscape, "undefined escape sequence '\\t' at byte 10"),
        .init("SEND\nf\\x:a\n\n\0", .invalidEscape, "undefined escape sequence '\\x' at byte 6"),
        .init("SEND\n\n\0SEND\nx:\\q\n\n\0", .invalidEscape, "undefined escape sequence '\\q' at byte 7"),
        .init("SEND\nfoo:ab\\\n\n\0", .invalidEscape, "incomplete escape sequence at byte 11: '\\' ends the header name or value"),
        // content-length
        .init(
            "SEND\ncontent-length:12a\n\n\0", .invalidContentLength,
            "invalid content-length '12a' at byte 20: expected a decimal number of octets"),
        .init(
            "SEND\ncontent-length:-1\n\n\0", .invalidContentLength,
            "invalid content-length '-1' at byte 20: expected a decimal number of octets"),
        .init(
            "SEND\ncontent-length: 5\n\nhello\0", .invalidContentLength,
            "invalid content-length ' 5' at byte 20: expected a decimal number of octets"),
        .init(
            "SEND\ncontent-length:\n\n\0", .invalidContentLength,
            "invalid content-length '' at byte 20: expected a decimal number of octets"),
        .init("SEND\ncontent-length:3\n\nhello\0", .missingNul, "expected NUL after the 3-byte body at byte 26, found 'l'"),
        .init("SEND\ncontent-length:0\n\n\n\0", .missingNul, "expected NUL after the 0-byte body at byte 23, found '\\x0A'"),
        // Limits
        .init("SEND\nx:\(long)\n\n\0", .headerTooLarge, "header section larger than 64 bytes at byte 64", maxHeaderBytes: 64),
        .init(long, .headerTooLarge, "header section larger than 64 bytes at byte 64", maxHeaderBytes: 64),
        .init("SEND\ncontent-length:11\n\n", .bodyTooLarge, "body larger than 10 bytes at byte 20", maxBodyBytes: 10),
        .init("SEND\ncontent-length:99999999999999999999999\n\n\0", .bodyTooLarge, "body larger than 1048576 bytes at byte 20"),
        .init("SEND\n\n\(long)\0", .bodyTooLarge, "body larger than 10 bytes at byte 16", maxBodyBytes: 10)
    ]
}

@Suite("STOMP decoding errors")
struct StompErrorTests {
    @Test("names the problem and the byte offset", arguments: StompErrorCase.all)
    func message(errorCase: StompErrorCase) throws {
        let error = try #require(errorCase.error())
        #expect(error.description == errorCase.description)
        #expect(error.kind == errorCase.kind)
        #expect(error.description.contains("at byte \(error.offset)"))
    }

    @Test("reports the same error however the bytes are cut", arguments: StompErrorCase.all)
    func sameErrorWhenSplit(errorCase: StompErrorCase) throws {
        let whole = try #require(errorCase.error())
        #expect(errorCase.error(pieces: stompPieces(errorCase.bytes.count, size: 1)) == whole)
        for split in 0...errorCase.bytes.count {
            #expect(errorCase.error(pieces: stompPieces(errorCase.bytes.count, splitAt: split)) == whole, "split at \(split)")
        }
    }

    @Test("covers every kind of error")
    func everyKindIsTested() {
        #expect(Set(StompErrorCase.all.map(\.kind)) == Set(StompError.Kind.allCases))
    }

    @Test("quotes at most 32 bytes of peer input")
    func quotingIsBounded() {
        let error = stompDecode(stompBytes(String(repeating: "X", count: 40) + "\n\n\0")).error
        #expect(error?.description == "unknown command '\(String(repeating: "X", count: 32))…' at byte 0")
    }
}
