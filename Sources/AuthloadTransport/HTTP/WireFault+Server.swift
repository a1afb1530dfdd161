import AuthloadCore
import AuthloadWire

extension WireFault {
    /// What the server does on the wire to inject this fault into the answer `response`.
    enum ServerAction: Equatable {
        /// Write these bytes, then close (FIN).
        case writeAndClose([UInt8])
        /// Reset the connection (RST).
        case reset
        /// Write nothing and keep the connection open.
        case silent
        /// Write these bytes one a second.
        case trickle([UInt8])
    }

    /// The bytes (and what follows them) that break `response` this way. Pure, so it is tested directly.
    func serverAction(for response: HTTPResponse) -> ServerAction {
        var whole: [UInt8] = []
        response.serialize(into: &whole, keepAlive: false)
        let headEnd = Self.headerEnd(whole)
        switch self {
        case .reset, .tlsHandshake:
            return .reset
        case .noResponse:
            return .silent
        case .trickle:
            return .trickle(whole)
        case .malformedStatus:
            return .writeAndClose(Array("HTTP/1.1 OK 200\r\n".utf8) + whole[(whole.firstIndex(of: UInt8(ascii: "\n"))! + 1)...])
        case .malformedHeader:
            let lineEnd = whole.firstIndex(of: UInt8(ascii: "\n"))! + 1
            return .writeAndClose(Array(whole[..<lineEnd]) + Array("X-Broken header without a colon\r\n".utf8) + whole[lineEnd...])
        case .oversizedHeaders:
            let lineEnd = whole.firstIndex(of: UInt8(ascii: "\n"))! + 1
            let padding = "X-Padding: " + String(repeating: "a", count: 80 * 1024) + "\r\n"
            return .writeAndClose(Array(whole[..<lineEnd]) + Array(padding.utf8) + whole[lineEnd...])
        case .shortBody:
            // The head promises the whole body; half of it comes, then the end of the stream.
            let body = whole.count - headEnd
            return .writeAndClose(Array(whole[..<(headEnd + max(0, body / 2))]) + (body == 0 ? Array("partial".utf8) : []))
        case .longBody:
            return .writeAndClose(whole + Array("EXTRA BYTES BEYOND CONTENT-LENGTH".utf8))
        case .closeMidBody:
            // A chunked body that stops inside its first chunk.
            var chunked = response
            chunked.headers.set("Transfer-Encoding", "chunked")
            if chunked.body.isEmpty { chunked.body = Array("partial body".utf8) }
            var bytes: [UInt8] = []
            chunked.serialize(into: &bytes, keepAlive: false)
            let dataStart = bytes[Self.headerEnd(bytes)...].firstIndex(of: UInt8(ascii: "\n"))! + 1
            return .writeAndClose(Array(bytes[..<(dataStart + max(1, chunked.body.count / 2))]))
        }
    }

    /// The index just past the blank line that ends the header section.
    private static func headerEnd(_ bytes: [UInt8]) -> Int {
        let marker: [UInt8] = [13, 10, 13, 10]
        guard bytes.count >= 4 else { return bytes.count }
        for index in 0...(bytes.count - 4) where bytes[index..<(index + 4)].elementsEqual(marker) { return index + 4 }
        return bytes.count
    }
}
