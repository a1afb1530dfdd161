// libFuzzer target for HTTPRequestParser: what the embedded staging server (`authload serve`) reads from
// any client that connects to it.
//
// Input: one control byte (stream closed at the end or not, small or default limits), a split offset,
// then the bytes the client sent.
// Invariants beyond "does not crash":
// - the bytes parse the same whole, cut in two at the split offset, and cut into 1–16-byte reads:
//   the same requests and the same error at the same offset;
// - after an error the parser throws that error again, its offset lies within the bytes fed, and its
//   suggested status is a 4xx or 5xx to answer with;
// - no body exceeds the body limit;
// - a parsed request, serialized with `serialize(into:host:)` and parsed again, keeps its method,
//   target, headers (framing fields aside) and body.
import AuthloadCore
import AuthloadWire

extension HTTPRequestParser: HTTPStreamParser {
    static func isNeedMoreData(_ event: Event) -> Bool { event == .needMoreData }
    static func isEndOfStream(_ event: Event) -> Bool { event == .endOfStream }
}

/// Headers other than those the serializer writes itself (framing, and `Host` when the request had none).
private func nonFraming(_ headers: HTTPHeaders) -> [HTTPField] {
    headers.fields.filter {
        !$0.name.caseInsensitiveEquals("content-length") && !$0.name.caseInsensitiveEquals("transfer-encoding")
    }
}

private func checkRoundTrip(_ request: HTTPRequest) {
    var wire: [UInt8] = []
    request.serialize(into: &wire, host: "fuzz.invalid")
    var parser = HTTPRequestParser()
    parser.feed(wire)
    let event: HTTPRequestParser.Event
    do {
        event = try parser.next()
    } catch {
        require(false, "serialized \(request) does not parse: \(error)")
        return
    }
    guard case .request(let again, _) = event else {
        require(false, "serialized \(request) is incomplete: \(event)")
        return
    }
    require(again.method == request.method, "method \(request.method) came back as \(again.method)")
    require(again.target == request.target, "target \(request.target) came back as \(again.target)")
    require(again.body == request.body, "body of \(request.body.count) bytes came back as \(again.body.count)")
    let hadHost = request.headers.fields.contains { $0.name.caseInsensitiveEquals("host") }
    let back = nonFraming(again.headers).filter { hadHost || !$0.name.caseInsensitiveEquals("host") }
    require(back == nonFraming(request.headers), "headers \(request.headers.fields) came back as \(again.headers.fields)")
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHTTPRequest(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    let control = input.byte()
    let split = input.uint16()
    let bytes = input.rest

    let endOfStream = control & 1 != 0
    let maxHeaderBytes = control & 2 != 0 ? 16 + Int(control >> 4) * 8 : 64 * 1024
    let maxBodyBytes = control & 4 != 0 ? Int(control >> 3) : 16 * 1024 * 1024

    func run(_ cuts: [Range<Int>]) -> ParseOutcome<HTTPRequestParser.Event> {
        parse(HTTPRequestParser(maxHeaderBytes: maxHeaderBytes, maxBodyBytes: maxBodyBytes), bytes, pieces: cuts, endOfStream: endOfStream)
    }
    let whole = run([0..<bytes.count])
    let halves = run(pieces(bytes.count, splitAt: split))
    require(halves == whole, "split at \(split) gave \(halves), whole gave \(whole)")
    let reads = run(pieces(bytes.count, seed: UInt8(truncatingIfNeeded: split)))
    require(reads == whole, "odd reads gave \(reads), whole gave \(whole)")

    if let error = whole.error {
        require((0...bytes.count).contains(error.offset), "error offset \(error.offset) outside the \(bytes.count) bytes: \(error)")
        require((400...599).contains(error.suggestedStatus), "suggested status \(error.suggestedStatus) for \(error)")
    }
    for case .request(let request, _) in whole.messages {
        require(request.body.count <= maxBodyBytes, "body of \(request.body.count) bytes over the \(maxBodyBytes) limit")
        checkRoundTrip(request)
    }
    return 0
}
