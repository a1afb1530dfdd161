import AuthloadCore
import Testing

@Suite("Constant memory: the time series keeps a fixed number of rows")
struct TimeseriesCompactionTests {
    @Test("merging two rows adds counts and spans and keeps the higher percentiles and peaks")
    func mergeRows() {
        let id = MetricID(flow: "login", step: "login")
        var a = IntervalRow(
            index: 4, startSeconds: 4, activeUsers: 10,
            metrics: [
                IntervalMetric(id: id, count: 5, errors: 1, p50Micros: 100, p90Micros: 200, p99Micros: 900, maxMicros: 950)
            ])
        a.droppedArrivals = 2
        var b = IntervalRow(
            index: 5, startSeconds: 5, activeUsers: 12,
            metrics: [
                IntervalMetric(id: id, count: 7, errors: 0, p50Micros: 150, p90Micros: 180, p99Micros: 400, maxMicros: 1_000),
                IntervalMetric(
                    id: MetricID(flow: "login", step: nil), count: 3, errors: 0, p50Micros: 1, p90Micros: 1, p99Micros: 1, maxMicros: 1)
            ])
        b.maxScheduleLagMicros = 300
        let merged = a.merged(with: b)
        #expect(merged.index == 4 && merged.startSeconds == 4 && merged.intervals == 2)
        #expect(merged.activeUsers == 12)
        var upperBound = IntervalMetric(id: id, count: 12, errors: 1, p50Micros: 150, p90Micros: 200, p99Micros: 900, maxMicros: 1_000)
        upperBound.upperBound = true
        #expect(merged.metrics.first == upperBound, "without histograms, the percentiles are the higher ones, marked as upper bounds")
        #expect(merged.metrics.count == 2)
        #expect(merged.droppedArrivals == 2 && merged.maxScheduleLagMicros == 300)
    }

    @Test("a long run keeps at most maxRows rows, every interval and sample accounted for, the recent past at full resolution")
    func collectorCompacts() {
        let catalog = MetricCatalog(flows: [("login", ["login"])])
        let recorder = MetricsRecorder(metricCount: catalog.count, interval: .seconds(1))
        let collector = Collector(catalog: catalog, recorder: recorder, lag: 1, maxRows: 8)
        for second in 0..<100 {
            recorder.record(
                metric: 1, startOffset: .milliseconds(second * 1000 + 10), latency: .milliseconds(second + 1), outcome: .ok, shard: 0)
            collector.tick(completed: second + 1, activeUsers: 1)
        }
        let rows = collector.finish(lastInterval: 99, activeUsers: 0).timeseries
        #expect(rows.count <= 8)
        #expect(rows.reduce(0) { $0 + $1.intervals } == 100, "every interval is covered once")
        #expect(rows.flatMap(\.metrics).filter { $0.id.step != nil }.reduce(0) { $0 + $1.count } == 100, "no sample is lost")
        #expect(zip(rows, rows.dropFirst()).allSatisfy { $0.index + $0.intervals == $1.index }, "rows are contiguous and in order")
        #expect(rows.last?.intervals == 1)
        #expect(rows.flatMap(\.metrics).map(\.maxMicros).max() == 100_000, "the worst latency survives merging")
    }

    @Test("a checkpoint's snapshot carries only the rows it has not saved, with the run's cumulative figures")
    func snapshotFromRow() {
        let catalog = MetricCatalog(flows: [("login", ["login"])])
        let recorder = MetricsRecorder(metricCount: catalog.count, interval: .seconds(1))
        let collector = Collector(catalog: catalog, recorder: recorder, lag: 1)
        for second in 0..<10 {
            recorder.record(metric: 1, startOffset: .milliseconds(second * 1000 + 10), latency: .milliseconds(5), outcome: .ok, shard: 0)
            collector.tick(completed: second + 1, activeUsers: 1)
        }
        // Ticks up to the end of interval 9 with a lag of 1 have finalized intervals 0 to 8.
        #expect(collector.snapshot(duration: .seconds(10)).timeseries.map(\.index) == Array(0...8))
        let later = collector.snapshot(duration: .seconds(10), rowsFrom: 6)
        #expect(later.timeseries.map(\.index) == [6, 7, 8])
        #expect(later.metrics.first { $0.id.step != nil }?.count == 10, "cumulative figures cover the whole run")
        #expect(collector.snapshot(duration: .seconds(10), rowsFrom: 9).timeseries.isEmpty)
    }

    @Test("rows a checkpoint saved are forgotten: later snapshots and the finish carry only the rest, totals still count every sample")
    func forgetsSavedRows() {
        let catalog = MetricCatalog(flows: [("login", ["login"])])
        let recorder = MetricsRecorder(metricCount: catalog.count, interval: .seconds(1))
        let collector = Collector(catalog: catalog, recorder: recorder, lag: 1)
        for second in 0..<10 {
            recorder.record(metric: 1, startOffset: .milliseconds(second * 1000 + 10), latency: .milliseconds(5), outcome: .ok, shard: 0)
            collector.tick(completed: second + 1, activeUsers: 40 + second)
        }
        // Ticks up to the end of interval 9 with a lag of 1 have finalized intervals 0 to 8; a checkpoint saved 0 to 5.
        collector.forgetRows(before: 6)
        #expect(collector.snapshot(duration: .seconds(10)).timeseries.map(\.index) == [6, 7, 8])
        collector.forgetRows(before: 3)
        #expect(collector.snapshot(duration: .seconds(10)).timeseries.map(\.index) == [6, 7, 8], "forgetting is idempotent")
        let measured = collector.finish(lastInterval: 9, activeUsers: 7)
        #expect(measured.timeseries.map(\.index) == [6, 7, 8, 9])
        #expect(measured.timeseries.map(\.activeUsers) == [46, 47, 48, 49])
        #expect(measured.metrics.first { $0.id.step != nil }?.count == 10, "the forgotten rows' samples stay in the totals")
    }

    @Test("a forgotten row still lends its active users to the next row, which had no count of its own")
    func activeUsersCarryOverForgottenRows() {
        let catalog = MetricCatalog(flows: [("login", ["login"])])
        let recorder = MetricsRecorder(metricCount: catalog.count, interval: .seconds(1))
        let collector = Collector(catalog: catalog, recorder: recorder, lag: 2)
        collector.tick(completed: 1, activeUsers: 25)
        collector.tick(completed: 2, activeUsers: 26)
        // The tick at the end of interval 2 came late and was skipped: interval 2 has no count of users.
        collector.tick(completed: 4, activeUsers: 40)
        #expect(collector.snapshot(duration: .seconds(4)).timeseries.map(\.activeUsers) == [25, 26])
        collector.forgetRows(before: 2)
        let measured = collector.finish(lastInterval: 3, activeUsers: 12)
        #expect(measured.timeseries.map(\.index) == [2, 3])
        #expect(measured.timeseries.map(\.activeUsers) == [26, 40])
    }

    @Test("a time series merges its oldest rows past maxRows and drops the rows saved before an interval")
    func timeSeriesBounds() {
        var series = TimeSeries(maxRows: 6)
        for index in 0..<20 {
            series.append(
                IntervalRow(
                    index: index, startSeconds: Double(index), activeUsers: index,
                    metrics: [
                        IntervalMetric(
                            id: MetricID(flow: "f", step: nil), count: 1, errors: 0, p50Micros: 1, p90Micros: 1, p99Micros: 1,
                            maxMicros: index)
                    ]))
            #expect(series.rows.count <= 6)
        }
        #expect(series.rows.reduce(0) { $0 + $1.intervals } == 20)
        #expect(series.rows.suffix(3).map(\.index) == [17, 18, 19], "the recent half at full resolution")
        let mergedEnd = series.rows[0].index + series.rows[0].intervals
        series.removeRows(before: mergedEnd - 1)
        #expect(series.rows.first?.index == 0, "a merged row that ends after the saved ones stays")
        series.removeRows(before: 18)
        #expect(series.rows.map(\.index) == [18, 19])
    }

    @Test("samples that finish after their row is final are counted per series, with how long rows wait")
    func lateSamplesBySeries() {
        let catalog = MetricCatalog(flows: [("streem", ["call"])])
        let recorder = MetricsRecorder(metricCount: catalog.count, interval: .seconds(1))
        let collector = Collector(catalog: catalog, recorder: recorder, lag: 2)
        for second in 0..<70 {
            // Calls finish within their interval; the flow that started at 0 s holds its session for 60 s.
            recorder.record(metric: 1, startOffset: .seconds(second), latency: .milliseconds(20), outcome: .ok, shard: 0)
            if second == 60 { recorder.record(metric: 0, startOffset: .zero, latency: .seconds(60), outcome: .ok, shard: 0) }
            collector.tick(completed: second + 1, activeUsers: 1)
        }
        let measured = collector.finish(lastInterval: 69, activeUsers: 0)
        #expect(measured.late.wait == .seconds(2))
        #expect(measured.late.total == 1)
        #expect(measured.late.bySeries.map(\.0) == [MetricID(flow: "streem", step: nil)])
        #expect(measured.metrics.first { $0.id.step == nil }?.count == 1, "a late sample still counts in the totals")
    }
}
