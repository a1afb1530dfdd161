import AuthloadCore

/// The server side of one HTTP/2 connection (RFC 9113), sans I/O: bytes and responses in, requests and actions out.
///
/// It reads the client preface and SETTINGS, writes its own SETTINGS and acknowledges the client's, joins HEADERS
/// and CONTINUATION into a request head and checks it (RFC 9113 §8.3: a malformed head is a stream error of type
/// PROTOCOL_ERROR), gathers the request's DATA while opening the flow-control windows again as they arrive, and
/// hands the owner a whole ``HTTPRequest`` once the client ends the stream. The owner answers with
/// ``respond(to:with:respondingToHEAD:)``: HEADERS, then DATA as far as the client's windows allow, the rest as
/// its WINDOW_UPDATEs come. A stream past this side's SETTINGS_MAX_CONCURRENT_STREAMS is refused with
/// REFUSED_STREAM; ``close(code:)`` writes GOAWAY and refuses every stream after it. Everything it shares with the
/// client's machine (frames, HPACK, stream states, windows, the error codes of §5.4) is `HTTP2Endpoint`'s.
///
/// ```swift
/// var connection = HTTP2ServerConnection()
/// perform(connection.start())                           // SETTINGS
/// for case .request(let stream, let request) in connection.received(bytesFromSocket) {
///     perform(connection.respond(to: stream, with: service.answer(request)))
/// }
/// ```
public struct HTTP2ServerConnection: Sendable {
    /// What the connection asks its owner to do, in order.
    public enum Action: Sendable, Hashable {
        /// Bytes to write to the socket.
        case write([UInt8])
        /// A whole request on a stream: answer it with ``HTTP2ServerConnection/respond(to:with:respondingToHEAD:)``.
        case request(streamID: UInt32, HTTPRequest)
        /// The stream ended before its answer was written: the client reset it, or this side did after a stream error.
        case streamReset(streamID: UInt32, HTTP2ErrorCode)
        /// The client is going away; the streams it opened still get their answers.
        case goAway(HTTP2ErrorCode, debugData: [UInt8])
        /// Close the socket: after this side wrote GOAWAY for a connection error with this code.
        case closeConnection(HTTP2ErrorCode)
    }

    /// A request whose head came and whose body is still coming.
    private struct Partial: Sendable {
        var request: HTTPRequest
        var contentLength: Int?
    }

    /// The largest request body taken; a larger one is answered 413 and the stream ended (RFC 9113 §8.1).
    public let maxBodyBytes: Int
    private var endpoint: HTTP2Endpoint
    private var partial: [UInt32: Partial] = [:]

    /// Creates a connection announcing `settings` (window and frame sizes clamped to RFC 9113's ranges).
    public init(settings: HTTP2Settings = HTTP2Settings(), maxBodyBytes: Int = 16 * 1024 * 1024) {
        endpoint = HTTP2Endpoint(role: .server, settings: settings)
        self.maxBodyBytes = max(0, maxBodyBytes)
    }

    /// The SETTINGS this side announces.
    public var settings: HTTP2Settings { endpoint.settings }

    /// This side's SETTINGS, the server's connection preface; it may go out before the client's preface arrives.
    public mutating func start() -> [Action] { [.write(endpoint.start())] }

    /// The state of a stream, as this side sees it.
    public func state(of streamID: UInt32) -> HTTP2StreamState { endpoint.state(of: streamID) }

    /// The streams open or half-closed: requests coming in or answers going out.
    public var activeStreamCount: Int { endpoint.streams.count }

    /// The connection-level window the client granted: DATA bytes this side may still send.
    public var sendWindow: Int { endpoint.sendWindow }

    /// Whether this side sent GOAWAY (``close(code:)``) or failed: no new stream will be served.
    public var isClosing: Bool { endpoint.closing || endpoint.failed != nil }

    /// Whether the client has yet to acknowledge this side's SETTINGS; the owner, which has a clock, times it out.
    public var isAwaitingSettingsAcknowledgement: Bool { endpoint.isAwaitingSettingsAcknowledgement }

    /// Fails the connection with SETTINGS_TIMEOUT, for an owner whose timer ran out waiting for the ACK.
    public mutating func settingsTimedOut() -> [Action] { endpoint.settingsTimedOut().compactMap(Self.action) }

    /// Bytes read from the socket: the actions they call for, in order.
    public mutating func received(_ bytes: some Collection<UInt8>) -> [Action] {
        var actions: [Action] = []
        endpoint.feed(bytes)
        // A frame at a time: a request reset for its head must be reset before the next frame reads its stream.
        while let frameActions = endpoint.nextFrame() {
            for action in frameActions { handle(action, into: &actions) }
        }
        return actions
    }

    private mutating func handle(_ action: HTTP2Action, into actions: inout [Action]) {
        switch action {
        case .headers(let id, let headers, let endStream): head(headers, on: id, endStream: endStream, into: &actions)
        case .data(let id, let data, let endStream): body(data, on: id, endStream: endStream, into: &actions)
        case .streamReset(let id, _):
            partial[id] = nil
            actions += Self.action(action).map { [$0] } ?? []
        case .closeConnection:
            partial = [:]
            actions += Self.action(action).map { [$0] } ?? []
        default: actions += Self.action(action).map { [$0] } ?? []
        }
    }

    /// The answer to the request on `streamID`: HEADERS, and DATA as far as the client's windows allow now.
    ///
    /// Nothing is written when the stream is gone (the client reset it). For a HEAD request the head carries the
    /// body's `content-length` and no DATA follows.
    public mutating func respond(to streamID: UInt32, with response: HTTPResponse, respondingToHEAD: Bool = false) -> [Action] {
        guard endpoint.failed == nil, let state = endpoint.streams[streamID]?.state,
            state == .open || state == .halfClosedRemote
        else { return [] }
        partial[streamID] = nil
        let bodyless =
            respondingToHEAD || response.body.isEmpty || response.status < 200 || response.status == 204 || response.status == 304
        let head = endpoint.headerBytes(
            streamID: streamID, HTTP2MessageHead.headers(of: response, respondingToHEAD: respondingToHEAD), endStream: bodyless)
        if bodyless {
            endpoint.localEnded(streamID)
            return [.write(head)]
        }
        return [.write(head)] + endpoint.queue(response.body, on: streamID, endStream: true).compactMap(Self.action)
    }

    /// Resets one stream (an answer this side will not give).
    public mutating func resetStream(_ streamID: UInt32, code: HTTP2ErrorCode = .internalError) -> [Action] {
        partial[streamID] = nil
        return endpoint.resetStream(streamID, code: code).compactMap(Self.action)
    }

    /// Starts a graceful shutdown: GOAWAY naming the last stream taken; those run to their end, later ones are refused.
    public mutating func close(code: HTTP2ErrorCode = .noError) -> [Action] {
        endpoint.goAway(lastStreamID: endpoint.lastOpenedStreamID, code: code).compactMap(Self.action)
    }

    // MARK: - Requests

    private mutating func head(_ headers: [HPACKHeader], on id: UInt32, endStream: Bool, into actions: inout [Action]) {
        if partial[id] != nil {
            // The endpoint lets a second block through only with END_STREAM: trailers, which add nothing to the request.
            do throws(HTTP2MalformedRequest) {
                try HTTP2MessageHead.checkTrailers(headers)
            } catch {
                return malformed(id, into: &actions)
            }
            return finish(id, into: &actions)
        }
        let request: HTTPRequest
        let contentLength: Int?
        do throws(HTTP2MalformedRequest) {
            request = try HTTP2MessageHead.request(from: headers)
            contentLength = try Self.contentLength(request.headers)
        } catch {
            return malformed(id, into: &actions)
        }
        if let contentLength, contentLength > maxBodyBytes { return tooLarge(id, into: &actions) }
        partial[id] = Partial(request: request, contentLength: contentLength)
        if endStream { finish(id, into: &actions) }
    }

    private mutating func body(_ data: [UInt8], on id: UInt32, endStream: Bool, into actions: inout [Action]) {
        guard partial[id] != nil else { return } // answered already (413): the rest of the body is dropped
        partial[id]!.request.body += data
        let count = partial[id]!.request.body.count
        if count > maxBodyBytes { return tooLarge(id, into: &actions) }
        if let expected = partial[id]!.contentLength, count > expected { return malformed(id, into: &actions) }
        if endStream { finish(id, into: &actions) }
    }

    private mutating func finish(_ id: UInt32, into actions: inout [Action]) {
        guard let done = partial.removeValue(forKey: id) else { return }
        if let expected = done.contentLength, done.request.body.count != expected { return malformed(id, into: &actions) }
        actions.append(.request(streamID: id, done.request))
    }

    private mutating func malformed(_ id: UInt32, into actions: inout [Action]) {
        partial[id] = nil
        var resets: [HTTP2Action] = []
        endpoint.reset(id, .protocolError, into: &resets)
        actions += resets.compactMap(Self.action)
    }

    /// 413 with no body, then RST_STREAM NO_ERROR so the client stops sending the body (RFC 9113 §8.1).
    private mutating func tooLarge(_ id: UInt32, into actions: inout [Action]) {
        partial[id] = nil
        actions += respond(to: id, with: HTTPResponse(status: 413))
        actions += endpoint.resetStream(id, code: .noError).compactMap(Self.action)
    }

    /// The one `content-length` a request may carry, or nil; several that differ, or one that is no number, are malformed.
    private static func contentLength(_ headers: HTTPHeaders) throws(HTTP2MalformedRequest) -> Int? {
        let values = Set(headers.values(of: "content-length"))
        guard let value = values.first else { return nil }
        guard values.count == 1, let length = Int(value), length >= 0 else {
            throw HTTP2MalformedRequest(.contentLengthMismatch, "content-length", "content-length \(values.sorted()) is not one length")
        }
        return length
    }

    /// The server's view of an action of the shared machine; requests are built by this side from heads and DATA.
    private static func action(_ action: HTTP2Action) -> Action? {
        switch action {
        case .write(let bytes): .write(bytes)
        case .streamReset(let id, let code): .streamReset(streamID: id, code)
        case .goAway(_, let code, let debugData): .goAway(code, debugData: debugData)
        case .closeConnection(let code): .closeConnection(code)
        case .headers, .data, .pingAcknowledged: nil
        }
    }
}
