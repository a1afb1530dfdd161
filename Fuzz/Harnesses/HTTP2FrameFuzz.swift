// libFuzzer target for the HTTP/2 frame codec (HTTP2FrameDecoder, HTTP2FrameEncoder) and the client
// connection machine that reads the frames, HTTP2Connection.
//
// Input: one control byte (what precedes the first frame, default or larger SETTINGS_MAX_FRAME_SIZE), a
// split offset, a seed for odd reads, then the bytes the peer sent.
// Invariants beyond "does not crash":
// - the decoder gives the same frames and error whole, cut in two at the split offset, and cut into
//   1–16-byte reads; after an error it throws that error again;
// - an error's offset lies within the bytes;
// - no frame's payload exceeds SETTINGS_MAX_FRAME_SIZE;
// - the decoded frames, encoded again, decode to the same frames with no error;
// - a client connection with streams in every state reads the bytes as the server's to the same writes and
//   events whole and in odd reads, writes only frames a server reads without error, and nothing after
//   closeConnection, also when its owner then ends a body, pings and closes;
// - a server connection (HTTP2ServerConnection) fed the client preface, SETTINGS and then the bytes, answering
//   every request with 20 KB, does the same whole and in odd reads, writes only frames a client reads without
//   error, and nothing after closeConnection, also when it then shuts down.
import AuthloadCore
import AuthloadWire

private struct Decoded: Equatable {
    var frames: [HTTP2Frame] = []
    var error: HTTP2FrameError?
}

private func decode(
    _ bytes: [UInt8], start: HTTP2FrameDecoder.Start, maxFrameSize: Int, pieces: [Range<Int>]
) -> Decoded {
    var decoder = HTTP2FrameDecoder(start: start, maxFrameSize: maxFrameSize)
    var result = Decoded()
    for piece in pieces {
        decoder.feed(bytes[piece])
        do throws(HTTP2FrameError) {
            while case .frame(let frame) = try decoder.next() { result.frames.append(frame) }
        } catch {
            result.error = error
            requireSticky(error) { () throws(HTTP2FrameError) in try decoder.next() }
            return result
        }
    }
    return result
}

private struct ConnectionRun: Equatable {
    var written: [UInt8] = []
    var events: [HTTP2Connection.Action] = []
}

private func runConnection(_ bytes: [UInt8], pieces: [Range<Int>]) -> ConnectionRun {
    var connection = HTTP2Connection()
    var run = ConnectionRun()
    func record(_ actions: [HTTP2Connection.Action]) {
        if case .closeConnection? = run.events.last { require(actions.isEmpty, "actions after closeConnection: \(actions)") }
        for action in actions {
            if case .write(let bytes) = action { run.written += bytes } else { run.events.append(action) }
        }
    }
    record(connection.start())
    let request = [HPACKHeader(":method", "POST"), HPACKHeader(":path", "/login"), HPACKHeader("cookie", "a=b")]
    do throws(HTTP2Connection.UsageError) {
        let get = try connection.sendHeaders(request, endStream: true)
        record(get.actions)
        let upload = try connection.sendHeaders(request, endStream: false)
        record(upload.actions)
        record(try connection.sendData(streamID: upload.streamID, [UInt8](repeating: 7, count: 100_000), endStream: true))
        let open = try connection.sendHeaders(request, endStream: false)
        record(open.actions)
    } catch {
        require(false, "a fresh connection refused a request: \(error)")
    }
    for piece in pieces { record(connection.received(bytes[piece])) }
    // What an owner does next, whatever state the bytes left: end the open stream's body, ping, shut down.
    if let end = try? connection.sendData(streamID: 5, [1, 2, 3], endStream: true) { record(end) }
    record(connection.ping(1))
    record(connection.close())
    return run
}

private struct ServerRun: Equatable {
    var written: [UInt8] = []
    var events: [HTTP2ServerConnection.Action] = []
}

private func runServer(_ bytes: [UInt8], pieces: [Range<Int>]) -> ServerRun {
    var connection = HTTP2ServerConnection(maxBodyBytes: 50_000)
    var run = ServerRun()
    func record(_ actions: [HTTP2ServerConnection.Action]) {
        if case .closeConnection? = run.events.last { require(actions.isEmpty, "actions after closeConnection: \(actions)") }
        var requests: [UInt32] = []
        for action in actions {
            switch action {
            case .write(let bytes): run.written += bytes
            case .request(let id, _):
                run.events.append(action)
                requests.append(id)
            default: run.events.append(action)
            }
        }
        for id in requests {
            record(connection.respond(to: id, with: HTTPResponse(status: 200, body: [UInt8](repeating: 1, count: 20_000))))
        }
    }
    record(connection.start())
    record(connection.received(HTTP2FrameDecoder.clientPreface + HTTP2FrameEncoder.encode(.settings())))
    for piece in pieces { record(connection.received(bytes[piece])) }
    record(connection.close())
    return run
}

/// Requires that the peer reads every byte one side wrote as whole frames, without error.
private func requireReadable(_ written: [UInt8], start: HTTP2FrameDecoder.Start, writer: String, reader: String) {
    var decoder = HTTP2FrameDecoder(start: start)
    decoder.feed(written)
    do {
        while case .frame = try decoder.next() {}
        require(decoder.bufferedByteCount == 0, "\(writer) wrote a partial frame")
    } catch {
        require(false, "\(reader) cannot read what the \(writer) wrote: \(error)")
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHTTP2Frames(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    let control = input.byte()
    let split = input.uint16()
    let seed = input.byte()
    let bytes = input.rest

    let start: HTTP2FrameDecoder.Start =
        switch control & 3 {
        case 1: .clientPreface
        case 2: .serverPreface
        default: .none
        }
    let maxFrameSize = control & 4 != 0 ? 16_384 : 16_384 + Int(control >> 3) * 1000

    let whole = decode(bytes, start: start, maxFrameSize: maxFrameSize, pieces: [0..<bytes.count])
    let halves = decode(bytes, start: start, maxFrameSize: maxFrameSize, pieces: pieces(bytes.count, splitAt: split))
    require(halves == whole, "split at \(split) gave \(halves), whole gave \(whole)")
    let reads = decode(bytes, start: start, maxFrameSize: maxFrameSize, pieces: pieces(bytes.count, seed: seed))
    require(reads == whole, "odd reads gave \(reads), whole gave \(whole)")
    if let error = whole.error {
        require(error.offset >= 0 && error.offset <= bytes.count, "error offset \(error.offset) outside the \(bytes.count) bytes")
    }

    var encoded: [UInt8] = []
    for frame in whole.frames {
        let before = encoded.count
        HTTP2FrameEncoder.encode(frame, into: &encoded)
        require(encoded.count - before - 9 <= maxFrameSize, "\(frame) is over SETTINGS_MAX_FRAME_SIZE")
    }
    let again = decode(encoded, start: .none, maxFrameSize: maxFrameSize, pieces: [0..<encoded.count])
    require(again == Decoded(frames: whole.frames), "re-encoded frames decode as \(again), not \(whole.frames)")

    let connection = runConnection(bytes, pieces: [0..<bytes.count])
    let oddReads = runConnection(bytes, pieces: pieces(bytes.count, seed: seed))
    require(oddReads == connection, "connection gave \(oddReads) in odd reads, \(connection) whole")
    requireReadable(connection.written, start: .clientPreface, writer: "connection", reader: "a server")

    let served = runServer(bytes, pieces: [0..<bytes.count])
    let servedInOddReads = runServer(bytes, pieces: pieces(bytes.count, seed: seed))
    require(servedInOddReads == served, "server gave \(servedInOddReads) in odd reads, \(served) whole")
    requireReadable(served.written, start: .serverPreface, writer: "server", reader: "a client")
    return 0
}
