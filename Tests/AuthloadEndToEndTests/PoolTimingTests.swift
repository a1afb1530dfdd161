import AuthloadCore
import AuthloadTransport
import Testing

/// A service that answers every request after a fixed delay.
private struct DelayedService: HTTPService {
    let delay: Duration
    func respond(to request: HTTPRequest) -> ServiceReply { ServiceReply(HTTPResponse(status: 200), after: delay) }
}

@Suite("Shared connection pool timing over loopback", .timeLimit(.minutes(1)))
struct PoolTimingTests {
    @Test("a request that waits for the pool's only connection counts the wait: timing from the send would hide the queue")
    func queueCounts() async throws {
        let group = try EventLoopGroup(loops: 2)
        defer { group.shutdown() }
        let server = try HTTPServer(group: group, port: 0, service: DelayedService(delay: .milliseconds(100)))
        defer { server.close() }
        let transport = SocketTransport(
            group: group, configuration: SocketTransportConfiguration(connections: ConnectionSettings(policy: .shared(poolSize: 1))))
        let endpoint = Endpoint(host: "127.0.0.1", port: server.port)
        let timings = await withTaskGroup(of: Duration.self) { group in
            for _ in 0..<2 {
                group.addTask {
                    let client = transport.makeClient(for: endpoint)
                    defer { client.shutdown() }
                    return (try? await client.execute(HTTPRequest(method: "GET", target: "/"), timeout: .seconds(5)).timing.total) ?? .zero
                }
            }
            return await group.reduce(into: []) { $0.append($1) }.sorted()
        }
        #expect(timings[0] >= .milliseconds(100))
        #expect(timings[1] >= .milliseconds(200), "the second request queued behind the first: \(timings)")
    }

    @Test("the wait for a free connection counts against the request's timeout")
    func queueCountsAgainstTimeout() async throws {
        let group = try EventLoopGroup(loops: 2)
        defer { group.shutdown() }
        let server = try HTTPServer(group: group, port: 0, service: DelayedService(delay: .milliseconds(300)))
        defer { server.close() }
        let transport = SocketTransport(
            group: group, configuration: SocketTransportConfiguration(connections: ConnectionSettings(policy: .shared(poolSize: 1))))
        let endpoint = Endpoint(host: "127.0.0.1", port: server.port)
        let outcomes = await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<2 {
                group.addTask {
                    let client = transport.makeClient(for: endpoint)
                    defer { client.shutdown() }
                    return (try? await client.execute(HTTPRequest(method: "GET", target: "/"), timeout: .milliseconds(450))) != nil
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        // One answer takes 300 ms; the other waits 300 ms for the connection, and 300 ms more would pass 450 ms.
        #expect(outcomes.sorted { !$0 && $1 } == [false, true])
    }
}
