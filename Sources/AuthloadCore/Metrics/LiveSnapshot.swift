/// What a run has measured so far, for a scrape of its live metrics: the same cumulative figures the report
/// is built from, taken under one short lock and read outside it.
public struct LiveSnapshot: Sendable {
    /// Every series, in catalog order: flows, each followed by its steps.
    public var ids: [MetricID]
    /// Which series are events (observed, not requested).
    public var events: [Bool]
    /// Every sample drained so far, per series.
    public var series: [MetricSamples]
    public var activeUsers: Int
    /// Each threshold as the run stands now (windows judged so far; the rest over what has been measured).
    public var thresholds: [ThresholdVerdict]
    /// Each threshold's state, in the order of ``thresholds``: pending until it can be judged.
    public var thresholdStates: [ThresholdState]
    /// Arrivals dropped so far, and the worst schedule lag seen (open model and stages).
    public var droppedArrivals: Int
    public var maxScheduleLagMicros: Int
    /// How long the run has gone on, at the last tick.
    public var elapsed: Duration

    public init(
        ids: [MetricID], events: [Bool], series: [MetricSamples], activeUsers: Int, thresholds: [ThresholdVerdict],
        thresholdStates: [ThresholdState]? = nil, droppedArrivals: Int, maxScheduleLagMicros: Int, elapsed: Duration
    ) {
        self.ids = ids
        self.events = events
        self.series = series
        self.activeUsers = activeUsers
        self.thresholds = thresholds
        // Without states given, each verdict is taken as judged.
        self.thresholdStates = thresholdStates ?? thresholds.map { $0.passed ? .passing : .failing }
        self.droppedArrivals = droppedArrivals
        self.maxScheduleLagMicros = maxScheduleLagMicros
        self.elapsed = elapsed
    }
}
