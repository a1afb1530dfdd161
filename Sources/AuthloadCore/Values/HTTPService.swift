/// Answers requests: the server side of a staging service, the same behind a socket or in process.
///
/// It answers at once with the reply and how long the reply should take to arrive, so the caller
/// applies the delay on its own time base (an event-loop timer, or the injected clock).
public protocol HTTPService: Sendable {
    func respond(to request: HTTPRequest) -> ServiceReply
}

/// A service's answer and how long it takes to arrive.
public struct ServiceReply: Sendable {
    public var result: Result<HTTPResponse, TransportError>
    public var latency: Duration
    /// Break the answer on the wire this way instead (fault injection); `result` is what gets broken.
    public var fault: WireFault?

    public init(_ response: HTTPResponse, after latency: Duration = .zero) {
        self.result = .success(response)
        self.latency = latency
    }

    /// The connection fails instead of answering (fault injection).
    public init(failure: TransportError, after latency: Duration = .zero) {
        self.result = .failure(failure)
        self.latency = latency
    }

    /// What an in-process client hands its caller once the reply has arrived: the response, timed as
    /// taking `total` from hand-off to last byte, or the failure.
    ///
    /// Consuming: the reply is spent once delivered, so its response moves out rather than being copied (a retain and a
    /// release of each of its buffers).
    public consuming func delivered(after total: Duration) throws(TransportError) -> HTTPResponse {
        switch result {
        case .success(var response):
            response.timing = RequestTiming(timeToFirstByte: total, total: total, reusedConnection: true)
            return response
        case .failure(let error):
            throw error
        }
    }
}
