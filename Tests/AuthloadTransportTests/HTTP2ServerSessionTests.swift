import AuthloadCore
import AuthloadWire
import CSystem
import Testing

@testable import AuthloadTransport

/// The server's connection speaking HTTP/2 with prior knowledge, on an embedded loop over a scripted stream: the
/// preface found in pieces, streams answered as their latencies run out, the client's GOAWAY. No socket, no sleep.
@Suite("HTTP/2 server session on an embedded loop")
struct HTTP2ServerSessionTests {
    /// A client's side of the bytes: its HPACK encoder, and a reader for what the server wrote.
    struct Client {
        var encoder = HPACKEncoder()
        var reader = HTTP2FrameDecoder(start: .serverPreface)
        var hpack = HPACKDecoder()

        mutating func get(_ id: UInt32, _ path: String) -> [UInt8] {
            let head = [
                HPACKHeader(":method", "GET"), HPACKHeader(":scheme", "http"), HPACKHeader(":authority", "example.test"),
                HPACKHeader(":path", path)
            ]
            return HTTP2FrameEncoder.encode(.headers(streamID: id, fragment: encoder.encode(head), endStream: true))
        }

        /// The frames in `bytes`, with each HEADERS block decoded: (stream, status or nil, DATA text or nil).
        mutating func read(_ bytes: [UInt8]) throws -> [HTTP2Frame] {
            reader.feed(bytes)
            var frames: [HTTP2Frame] = []
            while case .frame(let frame) = try reader.next() { frames.append(frame) }
            return frames
        }

        /// The answers in `frames` as "stream status body", in the order their DATA ended.
        mutating func answers(_ frames: [HTTP2Frame]) throws -> [String] {
            var statuses: [UInt32: String] = [:]
            var answers: [String] = []
            for frame in frames {
                switch frame {
                case .headers(let id, let block, _, _, _, _):
                    statuses[id] = try hpack.decode(block).first { $0.name == ":status" }?.value
                case .data(let id, let data, true, _):
                    answers.append("\(id) \(statuses[id] ?? "?") \(String(decoding: data, as: UTF8.self))")
                default: break
                }
            }
            return answers
        }
    }

    static let opening = HTTP2FrameDecoder.clientPreface + HTTP2FrameEncoder.encode(.settings())

    @Test("a connection whose first bytes are the preface, however they arrive, is served HTTP/2")
    func priorKnowledge() throws {
        let harness = ServerConnectionTests.Harness()
        var client = Client()
        harness.stream.feed(Array(Self.opening[..<5]))
        harness.loop.fireReadable(harness.fd)
        #expect(harness.stream.written.isEmpty, "five bytes of the preface say nothing yet")
        harness.stream.feed(Array(Self.opening[5...]) + client.get(1, "/a"))
        harness.loop.fireReadable(harness.fd)
        let frames = try client.read(harness.stream.written)
        guard case .settings(false, _) = frames.first else {
            Issue.record("the server did not open with SETTINGS: \(frames)")
            return
        }
        #expect(frames.contains(.settings(ack: true)))
        #expect(try client.answers(frames) == ["1 200 /a"])
        #expect(harness.asked == ["/a"])
        #expect(!harness.loop.isClosed(harness.fd))
    }

    /// The answers in everything the server wrote so far, read from the start by a fresh client.
    static func answers(_ harness: ServerConnectionTests.Harness) throws -> [String] {
        var client = Client()
        return try client.answers(try client.read(harness.stream.written))
    }

    @Test("streams on one connection are answered as their latencies run out, not in the order they came")
    func multiplexed() throws {
        let harness = ServerConnectionTests.Harness()
        var client = Client()
        harness.stream.feed(Self.opening + client.get(1, "/slow/50") + client.get(3, "/slow/10") + client.get(5, "/now"))
        harness.loop.fireReadable(harness.fd)
        #expect(harness.asked == ["/slow/50", "/slow/10", "/now"], "every stream is served at once")
        #expect(try Self.answers(harness) == ["5 200 /now"])
        harness.loop.advanceTime(by: .milliseconds(10))
        #expect(try Self.answers(harness) == ["5 200 /now", "3 200 /slow/10"])
        harness.loop.advanceTime(by: .milliseconds(40))
        #expect(try Self.answers(harness) == ["5 200 /now", "3 200 /slow/10", "1 200 /slow/50"])
    }

    @Test("after the client's GOAWAY the connection closes once its last stream is answered")
    func clientGoAway() throws {
        let harness = ServerConnectionTests.Harness()
        var client = Client()
        harness.stream.feed(Self.opening + client.get(1, "/slow/20") + HTTP2FrameEncoder.encode(.goAway(lastStreamID: 0, .noError)))
        harness.loop.fireReadable(harness.fd)
        #expect(!harness.loop.isClosed(harness.fd), "stream 1 is still to be answered")
        harness.loop.advanceTime(by: .milliseconds(20))
        #expect(try client.answers(try client.read(harness.stream.written)) == ["1 200 /slow/20"])
        #expect(harness.loop.isClosed(harness.fd))
    }

    @Test("a connection that breaks the protocol gets GOAWAY and is closed once it is written")
    func protocolError() throws {
        let harness = ServerConnectionTests.Harness()
        var client = Client()
        harness.stream.feed(Self.opening + HTTP2FrameEncoder.encode(.data(streamID: 7, data: [1])))
        harness.loop.fireReadable(harness.fd)
        let frames = try client.read(harness.stream.written)
        guard case .goAway(0, .protocolError, _)? = frames.last else {
            Issue.record("no GOAWAY PROTOCOL_ERROR: \(frames)")
            return
        }
        #expect(harness.loop.isClosed(harness.fd))
    }
}
