import AuthloadCore
import AuthloadWire
import Testing

@testable import AuthloadTransport

/// Which unprocessed requests count as sent again (``HTTPResponse/resent``): those whose streams the server refused,
/// not those a connection going away never sent.
@Suite("HTTP/2 resends: refused by the server or never sent")
struct HTTP2ResendTests {
    typealias Harness = HTTP2ClientConnectionTests.Harness

    @Test("a stream refused by RST_STREAM REFUSED_STREAM was sent; another code is no resend at all")
    func refusedStream() {
        let harness = Harness()
        harness.open()
        harness.send()
        harness.send()
        harness.arrive(.rstStream(streamID: 1, .refusedStream), .rstStream(streamID: 3, .protocolError))
        #expect(harness.error(0)?.isUnprocessedByServer == true && harness.error(0)?.wasRefusedByServer == true)
        #expect(harness.error(1)?.wasRefusedByServer == false)
    }

    @Test("a stream above a GOAWAY's last was sent; a request waiting for a stream, or handed over after it, was not")
    func goAway() {
        let harness = Harness()
        harness.open([HTTP2Setting(.maxConcurrentStreams, 2)])
        for _ in 0..<3 { harness.send() }
        #expect(harness.written().compactMap { harness.fields(of: $0) }.count == 2, "two streams open, one request waiting")
        harness.arrive(.goAway(lastStreamID: 1, .noError))
        harness.send()
        #expect((0..<4).map { harness.error($0)?.isUnprocessedByServer } == [nil, true, true, true])
        #expect(harness.error(1)?.wasRefusedByServer == true, "stream 3, above the last")
        #expect(harness.error(2)?.wasRefusedByServer == false, "it was waiting for a stream")
        #expect(harness.error(3)?.wasRefusedByServer == false, "handed over after the GOAWAY")
    }
}
