import AuthloadCore
import AuthloadWire
import CSystem

/// The HTTP/2 side of one server connection: performs what its ``HTTP2ServerConnection`` decides, asks the
/// service for each request's answer and hands the answers back, each after its own latency.
///
/// The server's connection hands its ``ConnectionCore`` over when ALPN chose `h2` or the connection opened with
/// the client preface (h2c with prior knowledge), as it hands it to the WebSocket frames after an upgrade. Streams
/// are answered in the order their latencies run out, not the order they came: that is what multiplexing is for.
/// The writes of one batch of actions go out as one write.
final class HTTP2ServerSession {
    let core: ConnectionCore
    let loop: any ConnectionLoop
    let service: any HTTPService
    private var machine = HTTP2ServerConnection()
    /// Streams whose request was a HEAD: their answer carries no DATA.
    private var heads: Set<UInt32> = []
    /// Close once what is queued is written: the machine failed, or the client went away and nothing is in flight.
    private var closeWhenWritten = false
    private var clientLeft = false

    init(core: ConnectionCore, loop: any ConnectionLoop, service: any HTTPService) {
        self.core = core
        self.loop = loop
        self.service = service
    }

    /// Writes this side's SETTINGS and reads `leftover`, the bytes the connection read before it knew it spoke HTTP/2.
    func start(leftover: [UInt8]) {
        perform(machine.start() + machine.received(leftover))
        // Decrypted input waiting inside a TLS stream is invisible to epoll.
        if core.stream.hasBufferedInput { readAvailable() }
    }

    func handleEvents(_ events: UInt32) {
        if events & EPOLLOUT.rawValue != 0 { written(core.flush()) }
        if events & (EPOLLIN.rawValue | EPOLLHUP.rawValue | EPOLLERR.rawValue) != 0 { readAvailable() }
    }

    private func readAvailable() {
        guard !core.isClosed else { return }
        let end = core.read { chunk in
            perform(machine.received(chunk))
            return !core.isClosed && !closeWhenWritten
        }
        switch end {
        case .paused: break
        case .end, .failed: core.close()
        }
    }

    private func perform(_ actions: [HTTP2ServerConnection.Action]) {
        var output: [UInt8] = []
        var requests: [(UInt32, HTTPRequest)] = []
        for action in actions {
            switch action {
            case .write(let bytes): output += bytes
            case .request(let id, let request): requests.append((id, request))
            case .streamReset(let id, _): heads.remove(id)
            case .goAway: clientLeft = true
            case .closeConnection: closeWhenWritten = true
            }
        }
        if !output.isEmpty { written(core.send(output)) }
        for (id, request) in requests where !core.isClosed { serve(request, on: id) }
        if clientLeft && machine.activeStreamCount == 0 { closeWhenWritten = true }
        if closeWhenWritten && !core.hasOutput { core.close() }
    }

    /// Asks the service; the answer is held on a loop timer for its latency, so other streams go on meanwhile.
    private func serve(_ request: HTTPRequest, on id: UInt32) {
        if request.method == "HEAD" { heads.insert(id) }
        let reply = service.respond(to: request)
        if reply.latency <= .zero {
            deliver(reply, on: id)
        } else {
            _ = loop.schedule(at: loop.now + reply.latency) { [weak self] in self?.deliver(reply, on: id) }
        }
    }

    private func deliver(_ reply: ServiceReply, on id: UInt32) {
        guard !core.isClosed else { return }
        let head = heads.remove(id) != nil
        switch (reply.result, reply.fault) {
        case (.success(let response), nil):
            perform(machine.respond(to: id, with: response, respondingToHEAD: head))
        case (.success, let fault?):
            inject(fault, on: id)
        case (.failure, _):
            // The service failed the connection, as a crashed peer would: a reset, with no GOAWAY first.
            core.close(reset: true, graceful: false)
        }
    }

    /// Breaks one stream's answer (fault injection). The faults that break HTTP/1.1's framing (a bad status line or
    /// header, a short or long body) have no HTTP/2 form; the stream ends with RST_STREAM INTERNAL_ERROR instead.
    private func inject(_ fault: WireFault, on id: UInt32) {
        switch fault {
        case .reset, .tlsHandshake: core.close(reset: true, graceful: false)
        case .noResponse, .trickle: break // the stream stays unanswered until the client gives up
        case .malformedStatus, .malformedHeader, .oversizedHeaders, .shortBody, .longBody, .closeMidBody:
            perform(machine.resetStream(id, code: .internalError))
        }
    }

    /// Closes once everything queued is out, when the connection is to end; a socket that failed closes at once.
    private func written(_ progress: ConnectionCore.Progress) {
        switch progress {
        case .done: if closeWhenWritten { core.close() }
        case .pending: break
        case .failed: core.close()
        }
    }
}
