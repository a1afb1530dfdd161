import Testing

@testable import AuthloadWire

/// A small deterministic generator, so a failing mutation run can be replayed from its seed.
struct StompTestRandom: RandomNumberGenerator {
    var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Seeded mutation runs: a cheap stand-in for a libFuzzer target, replayable from the seed.
@Suite("STOMP decoder robustness")
struct StompRobustnessTests {
    /// Valid streams to mutate: every constructor, the GCCS example, CRLF frames and heart-beats.
    static let corpus: [[UInt8]] =
        StompFrameTests.constructed.map { StompFrameEncoder.encode($0) } + [
            StompFrameDecoderTests.gccsMessage,
            StompFrameDecoderTests.stream,
            stompBytes("SEND\r\ndestination:/a\\cb\r\ncontent-length:3\r\n\r\n\0x\0\0\r\n\n")
        ]

    /// Fragments that steer mutations towards the decoder's decision points.
    static let fragments: [[UInt8]] = [
        "\n", "\r\n", "\r", ":", "\\", "\\c", "\\n", "\\t", "\0", "\n\n", "content-length:", "content-length:5\n",
        "content-length:0", "99999999999999999999", "MESSAGE\n", "CONNECT\n", "\u{FF}", "é"
    ].map { Array($0.utf8) }

    static func mutate(_ stream: [UInt8], using random: inout StompTestRandom) -> [UInt8] {
        var bytes = stream
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

    @Test("never crashes on mutated frames, and decodes them the same however the bytes arrive", arguments: 0..<8)
    func mutatedFrames(seed: UInt64) {
        var random = StompTestRandom(seed: seed)
        for _ in 0..<500 {
            let base = Self.corpus.randomElement(using: &random)!
            let bytes = Self.mutate(Self.corpus.randomElement(using: &random)! + base, using: &random)
            let headerLimit = Bool.random(using: &random) ? 64 * 1024 : Int.random(in: 0...80, using: &random)
            let bodyLimit = Bool.random(using: &random) ? 1 << 20 : Int.random(in: 0...40, using: &random)
            let run = { (pieces: [Range<Int>]?) in
                stompDecode(bytes, pieces: pieces, maxHeaderBytes: headerLimit, maxBodyBytes: bodyLimit)
            }
            let whole = run(nil)
            let split = Int.random(in: 0...bytes.count, using: &random)
            #expect(run(stompPieces(bytes.count, splitAt: split)) == whole, "seed \(seed), split \(split): \(bytes)")
            #expect(run(stompPieces(bytes.count, size: 1)) == whole, "seed \(seed), byte by byte: \(bytes)")
        }
    }

    @Test("never crashes on random bytes")
    func randomBytes() {
        var random = StompTestRandom(seed: 42)
        for _ in 0..<3000 {
            let bytes = (0..<Int.random(in: 0...300, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
            let outcome = stompDecode(bytes, maxHeaderBytes: Int.random(in: 0...400, using: &random))
            #expect(outcome.events.count <= bytes.count)
        }
    }

    /// Header text drawn from the bytes that matter to framing and escaping, plus multi-byte UTF-8.
    static func randomText(using random: inout StompTestRandom) -> String {
        let alphabet: [String] = ["a", "Z", "0", ":", "\\", "\r", "\n", "\0", " ", "-", "é", "✓", "\\c", "\r\n"]
        return (0..<Int.random(in: 0...6, using: &random)).map { _ in alphabet.randomElement(using: &random)! }.joined()
    }

    @Test("decodes whatever the encoder writes, dropping only bytes with no wire form", arguments: 0..<4)
    func encodeThenDecode(seed: UInt64) throws {
        var random = StompTestRandom(seed: seed &+ 1000)
        for _ in 0..<500 {
            let command = StompCommand.allCases.randomElement(using: &random)!
            var frame = StompFrame(command: command)
            var expected = StompFrame(command: command)
            for _ in 0..<Int.random(in: 0...4, using: &random) {
                let name = Self.randomText(using: &random)
                let value = Self.randomText(using: &random)
                frame.headers.append(name, value)
                // The encoder's documented sanitising: NUL always; CR and LF (and ':' in names) when unescaped.
                let dropped: Set<Character> = command.escapesHeaders ? ["\0"] : ["\0", "\r", "\n", "\r\n"]
                let keptName = name.filter { !dropped.contains($0) && (command.escapesHeaders || $0 != ":") }
                if !keptName.isEmpty, keptName != "content-length" {
                    expected.headers.append(keptName, value.filter { !dropped.contains($0) })
                }
            }
            frame.body = (0..<Int.random(in: 0...3, using: &random)).map { _ in [0, 0x0A, 0x41].randomElement(using: &random)! }
            expected.body = frame.body
            if !frame.body.isEmpty { expected.headers.append("content-length", "\(frame.body.count)") }
            let outcome = stompDecode(StompFrameEncoder.encode(frame))
            #expect(outcome.error == nil, "\(frame)")
            #expect(outcome.frames == [expected], "\(frame)")
        }
    }
}
