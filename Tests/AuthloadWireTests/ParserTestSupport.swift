import AuthloadCore

@testable import AuthloadWire

/// The bytes of `text`, so test messages can be written with `\r\n` in string literals.
func wire(_ text: String) -> [UInt8] { Array(text.utf8) }

/// Everything one feeding of a byte stream produced: the events in order and the error that stopped it, if any.
struct ParseOutcome<Event: Hashable>: Hashable {
    var events: [Event] = []
    var error: HTTPParseError?
    /// Whether the parser reported `.endOfStream` after the stream was closed.
    var endedCleanly = false
}

/// Feeds `bytes` to a response parser in the given pieces, draining after each, then closes the stream if asked.
func parseResponses(
    _ bytes: [UInt8],
    methods: [String] = [],
    pieces: [Range<Int>]? = nil,
    endOfStream: Bool = false,
    maxHeaderBytes: Int = 64 * 1024,
    maxBodyBytes: Int = 16 * 1024 * 1024
) -> ParseOutcome<HTTPResponseParser.Event> {
    var parser = HTTPResponseParser(maxHeaderBytes: maxHeaderBytes, maxBodyBytes: maxBodyBytes)
    for method in methods { parser.expectResponse(toMethod: method) }
    var outcome = ParseOutcome<HTTPResponseParser.Event>()
    func drain() -> Bool {
        do {
            while true {
                let event = try parser.next()
                switch event {
                case .needMoreData: return true
                case .endOfStream:
                    outcome.endedCleanly = true
                    return true
                case .response: outcome.events.append(event)
                }
            }
        } catch {
            outcome.error = error
            return false
        }
    }
    for piece in pieces ?? [0..<bytes.count] {
        parser.feed(bytes[piece])
        guard drain() else { return outcome }
    }
    if endOfStream {
        parser.endOfStream()
        _ = drain()
    }
    return outcome
}

/// Feeds `bytes` to a request parser in the given pieces, draining after each, then closes the stream if asked.
func parseRequests(
    _ bytes: [UInt8],
    pieces: [Range<Int>]? = nil,
    endOfStream: Bool = false,
    maxHeaderBytes: Int = 64 * 1024,
    maxBodyBytes: Int = 16 * 1024 * 1024
) -> ParseOutcome<HTTPRequestParser.Event> {
    var parser = HTTPRequestParser(maxHeaderBytes: maxHeaderBytes, maxBodyBytes: maxBodyBytes)
    var outcome = ParseOutcome<HTTPRequestParser.Event>()
    func drain() -> Bool {
        do {
            while true {
                let event = try parser.next()
                switch event {
                case .needMoreData: return true
                case .endOfStream:
                    outcome.endedCleanly = true
                    return true
                case .request: outcome.events.append(event)
                }
            }
        } catch {
            outcome.error = error
            return false
        }
    }
    for piece in pieces ?? [0..<bytes.count] {
        parser.feed(bytes[piece])
        guard drain() else { return outcome }
    }
    if endOfStream {
        parser.endOfStream()
        _ = drain()
    }
    return outcome
}

/// `0..<count` cut at `split`, or into pieces of `size` bytes.
func pieces(_ count: Int, splitAt split: Int) -> [Range<Int>] { [0..<split, split..<count] }

func pieces(_ count: Int, size: Int) -> [Range<Int>] {
    stride(from: 0, to: count, by: size).map { $0..<min($0 + size, count) }
}

extension HTTPResponseParser.Event {
    var response: HTTPResponse? {
        if case .response(let response, _) = self { response } else { nil }
    }

    var keepAlive: Bool? {
        if case .response(_, let keepAlive) = self { keepAlive } else { nil }
    }
}

extension HTTPRequestParser.Event {
    var request: HTTPRequest? {
        if case .request(let request, _) = self { request } else { nil }
    }

    var keepAlive: Bool? {
        if case .request(_, let keepAlive) = self { keepAlive } else { nil }
    }
}
