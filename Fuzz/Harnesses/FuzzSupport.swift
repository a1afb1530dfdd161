// Shared by every harness: reading control bytes off the front of an input, cutting a stream into
// pieces, and failing loudly when an invariant does not hold.

import AuthloadWire

/// A fuzz input read front to back: a few control bytes pick the parameters, the rest is the stream.
struct FuzzInput {
    private var bytes: ArraySlice<UInt8>

    init(_ data: UnsafePointer<UInt8>?, _ size: Int) {
        bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size))[...] } ?? []
    }

    /// The next byte, or 0 once the input is used up, so short inputs still make a valid run.
    mutating func byte() -> UInt8 { bytes.popFirst() ?? 0 }

    /// The next two bytes, big-endian.
    mutating func uint16() -> Int { Int(byte()) << 8 | Int(byte()) }

    /// Everything not read as a control byte.
    var rest: [UInt8] { Array(bytes) }
}

/// Stops the run with a message libFuzzer shows, so a broken invariant is a finding like a crash.
func require(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition { fatalError("fuzz invariant: \(message())") }
}

/// Cuts `count` bytes in two at `split` (clamped).
/// Checks that a decoder which threw `error` throws the same error at its next call: a broken stream stays broken.
func requireSticky<Failure: Error & Equatable, Value>(_ error: Failure, _ next: () throws(Failure) -> Value) {
    do throws(Failure) {
        _ = try next()
        require(false, "decoder went on after \(error)")
    } catch let again {
        require(again == error, "decoder threw \(again) after \(error)")
    }
}

func pieces(_ count: Int, splitAt split: Int) -> [Range<Int>] {
    let split = min(max(split, 0), count)
    return [0..<split, split..<count]
}

/// Cuts `count` bytes into pieces of 1 to 16 bytes, their sizes drawn from `seed`: a socket that delivers odd reads.
func pieces(_ count: Int, seed: UInt8) -> [Range<Int>] {
    var state = UInt64(seed) &* 0x9E37_79B9_7F4A_7C15 | 1
    var result: [Range<Int>] = []
    var start = 0
    while start < count {
        state ^= state << 13
        state ^= state >> 7
        state ^= state << 17
        let end = min(count, start + 1 + Int(state % 16))
        result.append(start..<end)
        start = end
    }
    return result
}

/// An incremental HTTP/1.1 parser as the harnesses drive it: bytes in, events out, ``HTTPParseError`` on bad input.
protocol HTTPStreamParser {
    associatedtype Event: Equatable
    mutating func feed(_ bytes: some Collection<UInt8>)
    mutating func endOfStream()
    mutating func next() throws(HTTPParseError) -> Event
    /// Whether `event` asks for more bytes (`needMoreData`) or reports the end of the stream (`endOfStream`).
    static func isNeedMoreData(_ event: Event) -> Bool
    static func isEndOfStream(_ event: Event) -> Bool
}

/// What a parser made of a stream: its messages, the error that stopped it, and whether it ended cleanly.
struct ParseOutcome<Event: Equatable>: Equatable {
    var messages: [Event] = []
    var error: HTTPParseError?
    var endedCleanly = false
}

/// Feeds `bytes` to `parser` piece by piece, pulling every event after each piece, then the end of the
/// stream if asked. After an error the parser must throw that same error again.
func parse<Parser: HTTPStreamParser>(
    _ parser: Parser, _ bytes: [UInt8], pieces: [Range<Int>],
    endOfStream: Bool
) -> ParseOutcome<Parser.Event> {
    var parser = parser
    var outcome = ParseOutcome<Parser.Event>()
    func drain() -> Bool {
        do {
            while true {
                let event = try parser.next()
                if Parser.isNeedMoreData(event) { return true }
                if Parser.isEndOfStream(event) {
                    outcome.endedCleanly = true
                    return true
                }
                outcome.messages.append(event)
            }
        } catch {
            outcome.error = error
            requireSticky(error) { () throws(HTTPParseError) in try parser.next() }
            return false
        }
    }
    for piece in pieces {
        parser.feed(bytes[piece])
        guard drain() else { return outcome }
    }
    if endOfStream {
        parser.endOfStream()
        _ = drain()
    }
    return outcome
}
