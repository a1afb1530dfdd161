import AuthloadCore
import Testing

@Suite("Metric catalog and collector: requests and events")
struct MetricCatalogTests {
    let catalog = MetricCatalog(
        flows: [("gccs", ["auth", "CreateChannel", "token"]), ("login", ["login"])],
        events: ["gccs": ["CreateChannel"]])

    @Test("numbers each flow, then its steps; event steps are steps but not requests")
    func numbering() {
        #expect(catalog.ids.map(\.description) == ["gccs", "gccs.auth", "gccs.CreateChannel", "gccs.token", "login", "login.login"])
        #expect(catalog.stepMetric(flow: 0, step: 1) == 2)
        #expect(catalog.isStep(2) && catalog.isEvent(2) && !catalog.isRequest(2))
        #expect(catalog.isRequest(1) && catalog.isRequest(3) && catalog.isRequest(5))
        #expect(!catalog.isRequest(0) && !catalog.isEvent(0))
    }

    @Test("the live request rate counts HTTP requests on the wire, not step or event samples, and summaries mark events")
    func collector() {
        let recorder = MetricsRecorder(metricCount: catalog.count, interval: .seconds(1))
        let collector = Collector(catalog: catalog, recorder: recorder, lag: 1)
        for metric in [1, 2, 2, 2, 3] {
            recorder.record(metric: metric, startOffset: .milliseconds(100), latency: .milliseconds(5), outcome: .ok, shard: 0)
        }
        // The two request steps took three requests (the WebSocket upgrade between them is one too).
        for _ in 0..<3 { recorder.countRequest(metric: catalog.flowMetric(0), startOffset: .milliseconds(100), shard: 0) }
        collector.tick(completed: 1, activeUsers: 1)
        #expect(collector.live.totalRequests == 3)
        let measured = collector.finish(lastInterval: 1, activeUsers: 0)
        #expect(measured.metrics.filter(\.isEvent).map(\.id.description) == ["gccs.CreateChannel"])
        #expect(measured.metrics.first { $0.id.description == "gccs.CreateChannel" }?.count == 3)
        #expect(measured.metrics.map(\.httpRequests) == [3, nil, nil, nil, 0, nil], "on flow rows only")
    }

    @Test("HTTP requests count by the version that answered them; one with no answer counts in the total only")
    func requestsByProtocol() {
        let recorder = MetricsRecorder(metricCount: catalog.count, interval: .seconds(1))
        let collector = Collector(catalog: catalog, recorder: recorder, lag: 1)
        let login = catalog.flowMetric(1)
        for version: HTTPVersion? in [.http2, .http2, .http1, nil, .http2] {
            recorder.countRequest(metric: login, startOffset: .milliseconds(200), shard: 1, version: version)
        }
        collector.tick(completed: 1, activeUsers: 1)
        #expect(collector.liveSnapshot().series[login].requestsByProtocol == RequestsByProtocol(h1: 1, h2: 3))
        let measured = collector.finish(lastInterval: 1, activeUsers: 0)
        let flow = measured.metrics.first { $0.id.description == "login" }
        #expect(flow?.httpRequests == 5)
        #expect(flow?.httpRequestsByProtocol == RequestsByProtocol(h1: 1, h2: 3))
        #expect(measured.metrics.first { $0.id.description == "login.login" }?.httpRequestsByProtocol == nil)
        #expect(RequestsByProtocol(h1: 1, h2: 3).text(total: 5, String.init) == "h1 1, h2 3, no answer 1")
        #expect(RequestsByProtocol(h1: 0, h2: 5).text(total: 5, String.init) == "h1 0, h2 5")
    }

    @Test("requests sent again count apart from the requests, answered or not, in the live figures and the flow's summary")
    func resentRequests() {
        let recorder = MetricsRecorder(metricCount: catalog.count, interval: .seconds(1))
        let collector = Collector(catalog: catalog, recorder: recorder, lag: 1)
        let login = catalog.flowMetric(1)
        for (version, resent): (HTTPVersion?, Int) in [(.http2, 2), (.http2, 0), (nil, 9), (.http1, 0)] {
            recorder.countRequest(metric: login, startOffset: .milliseconds(300), shard: 2, version: version, resent: resent)
        }
        collector.tick(completed: 1, activeUsers: 1)
        #expect(collector.liveSnapshot().series[login].httpResent == 11)
        #expect(collector.live.totalRequests == 4)
        let measured = collector.finish(lastInterval: 1, activeUsers: 0)
        let flow = measured.metrics.first { $0.id.description == "login" }
        #expect(flow?.httpRequests == 4 && flow?.httpResent == 11)
        #expect(measured.metrics.first { $0.id.description == "login.login" }?.httpResent == nil)
        #expect(measured.metrics.first { $0.id.description == "gccs" }?.httpResent == 0)
    }
}
