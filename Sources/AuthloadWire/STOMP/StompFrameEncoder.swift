/// Writes frames in STOMP 1.2 wire form, and the heart-beat that goes between them.
///
/// The output is always one well-formed frame that ``StompFrameDecoder`` reads back, whatever the
/// frame holds. Header names and values are escaped, except in CONNECT, STOMP and CONNECTED frames
/// (see ``StompCommand/escapesHeaders``). A few bytes have no wire form and are dropped rather than
/// allowed to split the frame or inject a header: NUL anywhere in a header; CR and LF in the unescaped
/// frames; `:` in their header names. A header whose name ends up empty is skipped.
///
/// ```swift
/// let frame = StompFrame.message(destination: "/user/queue", subscription: "/user/queue",
///                                messageID: "7f3c-12", contentType: "application/json",
///                                body: Array(#"{"status":"AuthCompleted"}"#.utf8))
/// socket.sendText(StompFrameEncoder.encode(frame))
/// socket.sendText(StompFrameEncoder.heartBeat)   // when the negotiated interval has passed
/// ```
public enum StompFrameEncoder {
    /// A single LF: the whole of a STOMP heart-beat, which readers skip between frames.
    public static let heartBeat: [UInt8] = [lineFeed]

    /// The wire form of `frame`, ending in NUL.
    ///
    /// A non-empty body gets a `content-length` header after the others, so that NUL bytes in it survive;
    /// a `content-length` the frame already has is written as is and must match the body.
    public static func encode(_ frame: StompFrame) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(64 + frame.body.count + frame.headers.reduce(0) { $0 + $1.name.utf8.count + $1.value.utf8.count + 2 })
        encode(frame, into: &output)
        return output
    }

    /// Appends the wire form of `frame` to `output`, e.g. straight into a WebSocket payload buffer.
    public static func encode(_ frame: StompFrame, into output: inout [UInt8]) {
        output.append(contentsOf: frame.command.rawValue.utf8)
        output.append(lineFeed)
        let escapes = frame.command.escapesHeaders
        var hasContentLength = false
        for (name, value) in frame.headers {
            hasContentLength = appendHeader(name, value, escaping: escapes, to: &output) || hasContentLength
        }
        appendBody(frame.body, hasContentLength: hasContentLength, to: &output)
    }

    /// The wire form of ``StompFrame/message(destination:subscription:messageID:contentType:body:)``'s frame, byte for
    /// byte, written without building the frame: a staging server sends one for every status it pushes, and the frame's
    /// header list was an allocation and a copy of every string in it.
    public static func encodeMessage(
        destination: String, subscription: String, messageID: String, contentType: String? = nil, body: [UInt8] = []
    ) -> [UInt8] {
        var output: [UInt8] = []
        let valueBytes = destination.utf8.count + subscription.utf8.count + messageID.utf8.count + (contentType?.utf8.count ?? 0)
        output.reserveCapacity(64 + body.count + 2 * valueBytes + messageHeaderBytes)
        output.append(contentsOf: StompCommand.message.rawValue.utf8)
        output.append(lineFeed)
        // MESSAGE escapes its headers, and none of these names is `content-length`: the body gets one of its own.
        appendHeader(plainName: "destination", destination, to: &output)
        appendHeader(plainName: "subscription", subscription, to: &output)
        appendHeader(plainName: "message-id", messageID, to: &output)
        if let contentType { appendHeader(plainName: "content-type", contentType, to: &output) }
        appendBody(body, hasContentLength: false, to: &output)
        return output
    }

    /// Appends the line of a header with an escaped value, whose name has no byte to escape or drop and is not
    /// `content-length`: written as is, without the scan and comparison ``appendHeader(_:_:escaping:to:)`` makes.
    private static func appendHeader(plainName name: StaticString, _ value: String, to output: inout [UInt8]) {
        output.append(contentsOf: UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount))
        output.append(colon)
        append(value, isName: false, escaping: true, to: &output)
        output.append(lineFeed)
    }

    /// The bytes of the names ``encodeMessage(destination:subscription:messageID:contentType:body:)`` writes, with their
    /// colons and line feeds and the `content-length` line.
    private static let messageHeaderBytes = 80

    /// Appends one header line, or nothing when its name comes out empty; returns whether the line is `content-length`.
    @discardableResult
    private static func appendHeader(_ name: String, _ value: String, escaping: Bool, to output: inout [UInt8]) -> Bool {
        let nameStart = output.count
        append(name, isName: true, escaping: escaping, to: &output)
        guard output.count > nameStart else { return false }
        output.append(colon)
        // Compared as written, so a name that only becomes `content-length` once NUL is dropped still counts.
        let isContentLength =
            output.count - nameStart == contentLengthColon.count && output[nameStart...].elementsEqual(contentLengthColon)
        append(value, isName: false, escaping: escaping, to: &output)
        output.append(lineFeed)
        return isContentLength
    }

    /// Appends the `content-length` a non-empty body needs (unless the frame has one), the blank line, the body and NUL.
    private static func appendBody(_ body: [UInt8], hasContentLength: Bool, to output: inout [UInt8]) {
        if !body.isEmpty, !hasContentLength {
            output.append(contentsOf: contentLengthColon)
            output.append(contentsOf: String(body.count).utf8)
            output.append(lineFeed)
        }
        output.append(lineFeed)
        output.append(contentsOf: body)
        output.append(0)
    }

    private static let lineFeed: UInt8 = 0x0A
    private static let carriageReturn: UInt8 = 0x0D
    private static let colon: UInt8 = 0x3A
    private static let backslash: UInt8 = 0x5C
    private static let contentLengthColon = Array("content-length:".utf8)

    /// Appends a header name or value as its frame writes it.
    ///
    /// Most headers hold no byte that is escaped or dropped, in any frame: those are copied whole, and only the rest
    /// go byte by byte through ``appendEscaping(_:isName:escaping:to:)``.
    static func append(_ text: String, isName: Bool, escaping: Bool, to output: inout [UInt8]) {
        var text = text
        let copied = text.withUTF8 { bytes -> Bool in
            guard !bytes.contains(where: needsCare) else { return false }
            output.append(contentsOf: bytes)
            return true
        }
        if !copied { appendEscaping(text, isName: isName, escaping: escaping, to: &output) }
    }

    /// Whether `byte` is escaped or dropped in some frame: NUL, CR, LF, `:` or `\`.
    @inline(__always)
    private static func needsCare(_ byte: UInt8) -> Bool {
        // All five are below 0x5D; one compare lets the common bytes (letters, digits, `-`, `/`) through.
        byte <= backslash && (byte == 0 || byte == carriageReturn || byte == lineFeed || byte == colon || byte == backslash)
    }

    static func appendEscaping(_ text: String, isName: Bool, escaping: Bool, to output: inout [UInt8]) {
        for byte in text.utf8 {
            if escaping, let letter = escapeLetter(byte) {
                output.append(backslash)
                output.append(letter)
            } else if byte == 0 || (!escaping && (byte == carriageReturn || byte == lineFeed || (isName && byte == colon))) {
                continue
            } else {
                output.append(byte)
            }
        }
    }

    /// The letter after `\` that stands for `byte` in STOMP 1.2 escaping, or nil when `byte` is written as is.
    private static func escapeLetter(_ byte: UInt8) -> UInt8? {
        switch byte {
        case carriageReturn: UInt8(ascii: "r")
        case lineFeed: UInt8(ascii: "n")
        case colon: UInt8(ascii: "c")
        case backslash: backslash
        default: nil
        }
    }
}
