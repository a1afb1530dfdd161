import AuthloadCore
import AuthloadWire

/// A client whose requests travel on HTTP/2 where the endpoint's route says so, multiplexed over its lanes' connections.
///
/// Per user it has one lane, on the user's loop: one connection, the user's requests its streams, as a device's app
/// has. Shared, it has a lane per pooled connection, spread over the loops, and a request takes the least loaded lane
/// of its own loop that has a stream free (no thread hop), else the least loaded anywhere, where it waits for a
/// stream. WebSockets, requests to an endpoint that speaks only HTTP/1.1 (found by ALPN, under `target.http` "auto")
/// and `target.http` "1.1" go to `http1`, the client the transport would make without HTTP/2.
///
/// A stream the server did not process (REFUSED_STREAM, or above the last stream of its GOAWAY) is sent again on a
/// connection that takes it, as a stale HTTP/1.1 connection's request is: it still counts once, since the server
/// never acted on it, and the response (or the error it ends in) says how many times it was sent again
/// (``HTTPResponse/resent``, ``TransportError/resent``), which reports count apart: the streams the server refused
/// (RST_STREAM REFUSED_STREAM, or opened above the last stream of its GOAWAY), not the requests that were still
/// waiting for a stream on a connection that went away, which had not been sent.
final class HTTP2Client: HTTPClient {
    private let route: EndpointRoute
    private let lanes: [HTTP2Lane]
    private let http1: any HTTPClient
    /// A per-user client closes its connection on shutdown; a pool's outlive any one user.
    private let ownsConnections: Bool
    /// How often a request the server did not process is sent at most before its refusal is the answer: a server
    /// that closes connections by GOAWAY after a few requests each leaves many streams unprocessed at once under load.
    static let attempts = 10

    init(route: EndpointRoute, lanes: [HTTP2Lane], http1: any HTTPClient, ownsConnections: Bool) {
        precondition(!lanes.isEmpty, "a client needs a lane")
        self.route = route
        self.lanes = lanes
        self.http1 = http1
        self.ownsConnections = ownsConnections
    }

    func execute(_ request: HTTPRequest, timeout: Duration, isolation: isolated (any Actor)?) async throws -> HTTPResponse {
        guard route.usesHTTP2 else { return try await http1.execute(request, timeout: timeout, isolation: isolation) }
        let address = try await route.readyAddress(isolation: isolation)
        let start = MonotonicInstant.now
        let deadline = start + timeout
        let fields = request.http2Fields(authority: route.hostHeader, scheme: route.scheme)
        var attempt = 1
        var resent = 0
        while true {
            do {
                var response = try await lane().send(
                    fields, body: request.body, address: address, start: start, deadline: deadline, isolation: isolation)
                response.resent = resent
                return response
            } catch HTTP2Detour.serverSpeaksOnlyHTTP1 {
                route.learnedServerSpeaksOnlyHTTP1()
                let spent = start.duration(to: MonotonicInstant.now)
                guard spent < timeout else { throw TransportError(.timeout).resent(resent) }
                do {
                    var response = try await http1.execute(request, timeout: timeout - spent, isolation: isolation)
                    response.timing.timeToFirstByte += spent
                    response.timing.total += spent
                    response.resent += resent
                    return response
                } catch let error as TransportError {
                    throw error.resent(resent)
                }
            } catch let error as TransportError {
                guard error.isUnprocessedByServer, attempt < Self.attempts else { throw error.resent(resent) }
                attempt += 1
                if error.wasRefusedByServer { resent += 1 }
            }
        }
    }

    /// The lane for a request: the only one, or the least loaded with a stream free, this loop's first.
    private func lane() -> HTTP2Lane {
        guard lanes.count > 1 else { return lanes[0] }
        var best: HTTP2Lane?
        var bestLoad = Int.max
        var bestHere: HTTP2Lane?
        var bestHereLoad = Int.max
        for lane in lanes {
            let load = lane.load.load(ordering: .relaxed)
            if load < bestLoad {
                best = lane
                bestLoad = load
            }
            if load < bestHereLoad, load < lane.capacity.load(ordering: .relaxed), lane.loop.inLoop {
                bestHere = lane
                bestHereLoad = load
            }
        }
        return bestHere ?? best!
    }

    /// A WebSocket holds a connection of its own on HTTP/1.1, as the apps' SDKs open theirs.
    func openWebSocket(_ request: HTTPRequest, protocols: [String], timeout: Duration) async throws -> any WebSocketConnection {
        try await http1.openWebSocket(request, protocols: protocols, timeout: timeout)
    }

    func shutdown() {
        http1.shutdown()
        guard ownsConnections else { return }
        for lane in lanes { lane.shutdown() }
    }
}

extension TransportError {
    /// This error, for a request sent `count` times again because the server had not processed it.
    fileprivate func resent(_ count: Int) -> TransportError {
        var error = self
        error.resent = count
        return error
    }
}
