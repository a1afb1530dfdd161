import Testing

@testable import AuthloadCore

@Suite("Counting a flow's requests")
struct CountingClientTests {
    /// A transport that answers, or fails, as told, having sent the request again `resent` times.
    struct Refusing: HTTPClient {
        let resent: Int
        let failure: TransportError?

        func execute(_ request: HTTPRequest, timeout: Duration, isolation: isolated (any Actor)?) async throws -> HTTPResponse {
            if var failure {
                failure.resent = resent
                throw failure
            }
            var response = HTTPResponse(status: 200)
            response.version = .http2
            response.resent = resent
            return response
        }

        func openWebSocket(_ request: HTTPRequest, protocols: [String], timeout: Duration) async throws -> any WebSocketConnection {
            throw TransportError(.connectionRefused)
        }

        func shutdown() {}
    }

    @Test(
        "a request sent again counts once, its resends apart, whether it was answered in the end or failed; one refused every time counts only its resends"
    )
    func resends() async throws {
        let catalog = MetricCatalog(flows: [("login", ["login"])])
        let recorder = MetricsRecorder(metricCount: catalog.count, interval: .seconds(1))
        let collector = Collector(catalog: catalog, recorder: recorder, lag: 1)
        func send(resent: Int, failure: TransportError? = nil) async {
            let client = CountingClient(
                base: Refusing(resent: resent, failure: failure), recorder: recorder, flowMetric: catalog.flowMetric(0), shard: 0)
            _ = try? await client.execute(HTTPRequest(method: "GET", target: "/"), timeout: .seconds(1), sentAt: .milliseconds(10))
        }
        await send(resent: 3)
        await send(resent: 0)
        // Refused each of its ten sends: the server never processed it, so it is in no access log.
        await send(resent: 9, failure: TransportError(.http2(code: 7, goAway: false), "h2 stream error REFUSED_STREAM"))
        await send(resent: 2, failure: TransportError(.timeout))
        // Refused once, then the next connection was refused: that send never left, the refused one did.
        await send(resent: 1, failure: TransportError(.connectionRefused))
        collector.tick(completed: 1, activeUsers: 1)
        let series = collector.liveSnapshot().series[catalog.flowMetric(0)]
        #expect(series.httpRequests == 3)
        #expect(series.httpResent == 15)
        #expect(series.requestsByProtocol == RequestsByProtocol(h1: 0, h2: 2))
        #expect(!CountingClient.reachedTheWire(TransportError(.http2(code: 7, goAway: false))), "REFUSED_STREAM: not processed")
        #expect(CountingClient.reachedTheWire(TransportError(.http2(code: 1, goAway: false))), "PROTOCOL_ERROR: it may have been")
        #expect(CountingClient.reachedTheWire(TransportError(.http2(code: 7, goAway: true))), "a GOAWAY's code is not a stream's")
    }
}
