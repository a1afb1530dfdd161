import AuthloadCore
import AuthloadReport
import AuthloadStaging
import AuthloadTransport

/// Serves a run's live metrics at `GET /metrics` for Prometheus, from the run's own collector, for the whole
/// run, its graceful stop and a linger after it (so the last scrape sees the final figures).
///
/// A scrape renders the collector's cumulative figures under its lock and the text outside it; it records
/// nothing and changes nothing, so scraping cannot disturb the run.
final class MetricsEndpoint: HTTPService {
    private let collector: Collector
    private let info: @Sendable () -> MetricsExposition.RunInfo
    private let server: Locked<HTTPServer?> = Locked(nil)

    init(collector: Collector, info: @escaping @Sendable () -> MetricsExposition.RunInfo) {
        self.collector = collector
        self.info = info
    }

    /// Starts listening; returns where, e.g. `http://127.0.0.1:9464/metrics`.
    func start(at address: ListenAddress, group: EventLoopGroup) throws(CLIError) -> String {
        let server: HTTPServer
        do {
            server = try HTTPServer(group: group, host: address.host, port: address.port, service: self)
        } catch {
            throw CLIError(
                "cannot serve metrics on \(address.host):\(address.port): \(error) (pick another port with --metrics-listen)",
                exitCode: .usage)
        }
        self.server.withLock { $0 = server }
        let host = server.host.contains(":") ? "[\(server.host)]" : server.host
        return "http://\(host):\(server.port)/metrics"
    }

    func close() { server.withLock { $0?.close() } }

    func respond(to request: HTTPRequest) -> ServiceReply {
        guard request.path == "/metrics" else {
            return ServiceReply(.json(status: 404, ["error": "live metrics are at /metrics"]))
        }
        guard request.method == "GET" else {
            return ServiceReply(HTTPResponse(status: 405, headers: ["Allow": "GET"]))
        }
        let format = MetricsExposition.Format(accept: request.headers["Accept"])
        var response = HTTPResponse(
            status: 200, body: Array(MetricsExposition.render(collector.liveSnapshot(), run: info(), format: format).utf8))
        response.headers.add("Content-Type", format.contentType)
        return ServiceReply(response)
    }
}
