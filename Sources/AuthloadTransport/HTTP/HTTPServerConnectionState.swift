import AuthloadCore
import AuthloadWire

/// The decisions of one HTTP/1.1 server connection, with no socket: which request to serve next, the
/// bytes of each answer, and when the connection stops serving.
///
/// The server's connection feeds it what it reads and asks for the ``next()`` request; it serves that
/// one (the service may hold the answer for its latency) and hands the answer back with ``answer(_:)``.
/// One request is served at a time, so pipelined requests are answered in the order they came.
///
/// A connection whose first bytes are the HTTP/2 client preface (h2c with prior knowledge, RFC 9113 §3.3) is not
/// HTTP/1.1 at all: ``next()`` hands it on as ``Next/http2(_:)``.
struct HTTPServerConnectionState {
    /// What to do next.
    enum Next: Equatable {
        /// Nothing to serve until more bytes come or the answer in progress is given.
        case wait
        /// Serve this request and give its answer to ``answer(_:)``.
        case serve(HTTPRequest)
        /// A WebSocket upgrade request: HTTP ends here; ``takeLeftover()`` holds the bytes behind it.
        case upgrade(HTTPRequest)
        /// A request the parser refused: write this answer, then close.
        case refuse([UInt8])
        /// The connection opened with the HTTP/2 client preface: these bytes, preface included, are HTTP/2's.
        case http2([UInt8])
    }

    private var parser = HTTPRequestParser()
    /// The request being served: whether the connection stays open after it, and whether it was a HEAD.
    private var serving: (keepAlive: Bool, head: Bool)?
    /// The connection closes once what is written is out; nothing more is served.
    private(set) var closing = false
    private var upgraded = false
    /// The first bytes, held until they show whether the connection opens with the HTTP/2 preface; nil once known.
    private var opening: [UInt8]?
    /// The bytes of a connection that opened with the HTTP/2 preface.
    private var http2: [UInt8]?

    /// - Parameter detectsHTTP2: look for the HTTP/2 preface at the start (a plain connection, or TLS without ALPN).
    init(detectsHTTP2: Bool = false) {
        opening = detectsHTTP2 ? [] : nil
    }

    /// An answer is being waited for.
    var isServing: Bool { serving != nil }

    mutating func received(_ bytes: UnsafeRawBufferPointer) {
        if let http2 {
            self.http2 = http2 + bytes
            return
        }
        guard var opening else { return parser.feed(bytes) }
        opening.append(contentsOf: bytes)
        let preface = HTTP2FrameDecoder.clientPreface
        let compared = min(opening.count, preface.count)
        if !opening.prefix(compared).elementsEqual(preface.prefix(compared)) {
            self.opening = nil
            parser.feed(opening)
        } else if compared == preface.count {
            self.opening = nil
            http2 = opening
        } else {
            self.opening = opening
        }
    }

    /// The next request to serve, if one is complete and nothing is being served.
    mutating func next() -> Next {
        if let http2 {
            self.http2 = []
            upgraded = true
            return http2.isEmpty ? .wait : .http2(http2)
        }
        guard serving == nil, !closing, !upgraded else { return .wait }
        do {
            guard case .request(let request, let keepAlive) = try parser.next() else { return .wait }
            if WebSocketHandshake.isUpgradeRequest(request) {
                upgraded = true
                return .upgrade(request)
            }
            serving = (keepAlive, request.method == "HEAD")
            return .serve(request)
        } catch {
            closing = true
            var bytes: [UInt8] = []
            HTTPResponse(status: error.suggestedStatus, body: Array("\(error)\n".utf8)).serialize(into: &bytes, keepAlive: false)
            return .refuse(bytes)
        }
    }

    /// The bytes that answer the request being served; after an answer that does not keep the
    /// connection alive, ``closing`` is set.
    mutating func answer(_ response: HTTPResponse) -> [UInt8] {
        guard let serving else { preconditionFailure("an answer with no request being served") }
        self.serving = nil
        var bytes: [UInt8] = []
        bytes.reserveCapacity(256 + response.body.count)
        response.serialize(into: &bytes, keepAlive: serving.keepAlive, respondingToHEAD: serving.head)
        if !serving.keepAlive { closing = true }
        return bytes
    }

    /// Serves nothing more: what is written now is the connection's last (a refused upgrade, an injected fault).
    mutating func closeAfterWriting() { closing = true }

    /// The bytes that came behind an upgrade request: the client's first frames.
    mutating func takeLeftover() -> [UInt8] { parser.takeUnparsedBytes() }
}
