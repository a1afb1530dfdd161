/// Time-series rows read straight from parsed JSON.
///
/// A long run's rows are most of its `result.json` (an hour of 1 s intervals with 20 series is about 10 MB),
/// and `JSONDecoder` reads them several times slower than authload's own parser, which matters to a
/// merge of many shards. These initializers read what `Codable` writes; they return nil on anything
/// else, and the caller then lets `JSONDecoder` read the file and say what is wrong with it.
extension IntervalRow {
    public init?(json: JSONValue) {
        guard let index = json["index"]?.intValue, let start = json["startSeconds"]?.numberValue,
            let active = json["activeUsers"]?.intValue, let list = json["metrics"]?.arrayValue
        else { return nil }
        var metrics: [IntervalMetric] = []
        metrics.reserveCapacity(list.count)
        for element in list {
            guard let metric = IntervalMetric(json: element) else { return nil }
            metrics.append(metric)
        }
        self.init(index: index, startSeconds: start, activeUsers: active, metrics: metrics)
        guard let dropped = Self.optional(json["droppedArrivals"], \.intValue),
            let lag = Self.optional(json["maxScheduleLagMicros"], \.intValue), let span = Self.optional(json["span"], \.intValue)
        else { return nil }
        (droppedArrivals, maxScheduleLagMicros, self.span) = (dropped, lag, span)
    }

    /// `.some(nil)` for an absent (or null) member, `.some(value)` for one of the right type, nil otherwise.
    static func optional<T>(_ value: JSONValue?, _ read: (JSONValue) -> T?) -> T?? {
        guard let value, !value.isNull else { return .some(nil) }
        return read(value).map { .some($0) }
    }
}

extension IntervalMetric {
    public init?(json: JSONValue) {
        guard let flow = json["id"]?["flow"]?.stringValue, let step = IntervalRow.optional(json["id"]?["step"], \.stringValue),
            let count = json["count"]?.intValue, let errors = json["errors"]?.intValue, let p50 = json["p50Micros"]?.intValue,
            let p90 = json["p90Micros"]?.intValue, let p99 = json["p99Micros"]?.intValue, let max = json["maxMicros"]?.intValue,
            let histogram = IntervalRow.optional(json["histogram"], \.stringValue),
            let failed = IntervalRow.optional(json["failedHistogram"], \.stringValue),
            let upperBound = IntervalRow.optional(json["upperBound"], \.boolValue)
        else { return nil }
        self.init(
            id: MetricID(flow: flow, step: step), count: count, errors: errors, p50Micros: p50, p90Micros: p90, p99Micros: p99,
            maxMicros: max)
        (self.histogram, failedHistogram, self.upperBound) = (histogram, failed, upperBound)
    }
}
