import AuthloadCore
import Testing

@testable import AuthloadWire

/// Seeded mutation runs: a cheap stand-in for the libFuzzer target, and replayable from the seed.
@Suite("Parser robustness")
struct ParserRobustnessTests {
    /// Fragments that steer mutations towards the parsers' decision points.
    static let fragments: [[UInt8]] = [
        "\r\n", "\r", "\n", ":", " ", "\t", ";", ",", "0", "f", "chunked", "Content-Length: ", "Transfer-Encoding: ",
        "Connection: close", "HTTP/1.1 ", "HTTP/1.0 101 ", "ffffffffffffffffff", "\r\n\r\n", "%", "\u{0}", "\u{7F}"
    ].map { Array($0.utf8) }

    static func mutate(_ message: [UInt8], using random: inout SplitMix64) -> [UInt8] {
        var bytes = message
        for _ in 0..<Int.random(in: 1...4, using: &random) {
            let position = bytes.isEmpty ? 0 : Int.random(in: 0..<bytes.count, using: &random)
            switch Int.random(in: 0..<6, using: &random) {
            case 0 where !bytes.isEmpty:
                bytes[position] = UInt8.random(in: 0...255, using: &random)
            case 1:
                bytes.insert(contentsOf: fragments.randomElement(using: &random)!, at: position)
            case 2 where !bytes.isEmpty:
                bytes.removeSubrange(position..<min(bytes.count, position + Int.random(in: 1...8, using: &random)))
            case 3:
                bytes.insert(contentsOf: bytes[position..<min(bytes.count, position + 24)], at: position)
            case 4:
                bytes.removeSubrange(position..<bytes.count)
            default:
                bytes += fragments.randomElement(using: &random)!
            }
        }
        return bytes
    }

    @Test("never crash on mutated responses, and fail or succeed the same way however bytes arrive", arguments: 0..<8)
    func mutatedResponses(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        let corpus = StreamCase.responses
        for _ in 0..<400 {
            let base = corpus.randomElement(using: &random)!
            let bytes = Self.mutate(base.bytes, using: &random)
            let closes = Bool.random(using: &random)
            let headerLimit = Bool.random(using: &random) ? 64 * 1024 : Int.random(in: 16...120, using: &random)
            let bodyLimit = Bool.random(using: &random) ? 1 << 24 : Int.random(in: 0...40, using: &random)
            let run = { (pieces: [Range<Int>]?) in
                parseResponses(
                    bytes, methods: base.methods, pieces: pieces, endOfStream: closes,
                    maxHeaderBytes: headerLimit, maxBodyBytes: bodyLimit)
            }
            let whole = run(nil)
            let split = Int.random(in: 0...bytes.count, using: &random)
            #expect(run(pieces(bytes.count, splitAt: split)) == whole, "seed \(seed), split \(split): \(bytes)")
            #expect(run(pieces(bytes.count, size: 1)) == whole, "seed \(seed), byte by byte: \(bytes)")
        }
    }

    @Test("never crash on mutated requests, and fail or succeed the same way however bytes arrive", arguments: 0..<8)
    func mutatedRequests(seed: UInt64) {
        var random = SplitMix64(seed: seed &+ 1000)
        let corpus = StreamCase.requests
        for _ in 0..<400 {
            let base = corpus.randomElement(using: &random)!
            let bytes = Self.mutate(base.bytes, using: &random)
            let closes = Bool.random(using: &random)
            let headerLimit = Bool.random(using: &random) ? 64 * 1024 : Int.random(in: 16...120, using: &random)
            let run = { (pieces: [Range<Int>]?) in
                parseRequests(bytes, pieces: pieces, endOfStream: closes, maxHeaderBytes: headerLimit, maxBodyBytes: 32)
            }
            let whole = run(nil)
            let split = Int.random(in: 0...bytes.count, using: &random)
            #expect(run(pieces(bytes.count, splitAt: split)) == whole, "seed \(seed), split \(split): \(bytes)")
            #expect(run(pieces(bytes.count, size: 1)) == whole, "seed \(seed), byte by byte: \(bytes)")
        }
    }

    @Test("never crash on random bytes")
    func randomBytes() {
        var random = SplitMix64(seed: 42)
        for _ in 0..<2000 {
            let bytes = (0..<Int.random(in: 0...300, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
            _ = parseResponses(bytes, endOfStream: true)
            _ = parseRequests(bytes, endOfStream: true)
        }
    }

    @Test("reject a header section that never ends, without buffering past the limit")
    func endlessHeaders() {
        var parser = HTTPResponseParser(maxHeaderBytes: 1024)
        parser.feed(wire("HTTP/1.1 200 OK\r\n"))
        var thrown: HTTPParseError?
        for _ in 0..<200 where thrown == nil {
            parser.feed(wire("X-Filler: aaaaaaaaaaaaaaaaaaaaa\r\n"))
            do { _ = try parser.next() } catch { thrown = error }
        }
        #expect(thrown?.kind == .headerTooLarge)
    }
}
