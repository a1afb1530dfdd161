// libFuzzer target for HTTPResponseParser (through HTTPMessageDecoder and its body framing).
//
// Input: one control byte (stream closed at the end or not, small or default limits), a split offset,
// a byte naming the methods of up to four requests, then the bytes the server sent.
// Invariants beyond "does not crash":
// - the bytes parse the same whole, cut in two at the split offset, and cut into 1–16-byte reads:
//   the same responses and the same error at the same offset;
// - after an error the parser throws that error again, and its offset lies within the bytes fed;
// - no body exceeds the body limit;
// - a parsed response, serialized with `serialize(into:keepAlive:)` and parsed again, keeps its
//   status, reason, headers (framing fields aside) and body.
import AuthloadCore
import AuthloadWire

extension HTTPResponseParser: HTTPStreamParser {
    static func isNeedMoreData(_ event: Event) -> Bool { event == .needMoreData }
    static func isEndOfStream(_ event: Event) -> Bool { event == .endOfStream }
}

/// Headers other than those the serializer replaces with its own framing.
private func nonFraming(_ headers: HTTPHeaders) -> [HTTPField] {
    headers.fields.filter {
        !$0.name.caseInsensitiveEquals("content-length") && !$0.name.caseInsensitiveEquals("transfer-encoding")
    }
}

private func checkRoundTrip(_ response: HTTPResponse) {
    guard response.status >= 200, response.status != 204, response.status != 304 else { return }
    var wire: [UInt8] = []
    response.serialize(into: &wire, keepAlive: true)
    var parser = HTTPResponseParser()
    parser.expectResponse(toMethod: "GET")
    parser.feed(wire)
    let event: HTTPResponseParser.Event
    do {
        event = try parser.next()
    } catch {
        require(false, "serialized \(response) does not parse: \(error)")
        return
    }
    guard case .response(let again, _) = event else {
        require(false, "serialized \(response) is incomplete: \(event)")
        return
    }
    require(again.status == response.status, "status \(response.status) came back as \(again.status)")
    require(again.reason == response.reason, "reason \(response.reason.debugDescription) came back as \(again.reason.debugDescription)")
    require(again.body == response.body, "body of \(response.body.count) bytes came back as \(again.body.count)")
    require(
        nonFraming(again.headers) == nonFraming(response.headers),
        "headers \(response.headers.fields) came back as \(again.headers.fields)")
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHTTPResponse(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    let control = input.byte()
    let split = input.uint16()
    let methodByte = input.byte()
    let bytes = input.rest

    let endOfStream = control & 1 != 0
    let maxHeaderBytes = control & 2 != 0 ? 16 + Int(control >> 4) * 8 : 64 * 1024
    let maxBodyBytes = control & 4 != 0 ? Int(control >> 3) : 16 * 1024 * 1024
    let names = ["GET", "HEAD", "CONNECT", "POST"]
    let methods = (0..<Int(control >> 6)).map { names[Int(methodByte >> (2 * $0)) & 3] }

    func run(_ cuts: [Range<Int>]) -> ParseOutcome<HTTPResponseParser.Event> {
        var parser = HTTPResponseParser(maxHeaderBytes: maxHeaderBytes, maxBodyBytes: maxBodyBytes)
        for method in methods { parser.expectResponse(toMethod: method) }
        return parse(parser, bytes, pieces: cuts, endOfStream: endOfStream)
    }
    let whole = run([0..<bytes.count])
    let halves = run(pieces(bytes.count, splitAt: split))
    require(halves == whole, "split at \(split) gave \(halves), whole gave \(whole)")
    let reads = run(pieces(bytes.count, seed: methodByte))
    require(reads == whole, "odd reads gave \(reads), whole gave \(whole)")

    if let error = whole.error {
        require((0...bytes.count).contains(error.offset), "error offset \(error.offset) outside the \(bytes.count) bytes: \(error)")
    }
    for case .response(let response, _) in whole.messages {
        require(response.body.count <= maxBodyBytes, "body of \(response.body.count) bytes over the \(maxBodyBytes) limit")
        checkRoundTrip(response)
    }
    return 0
}
