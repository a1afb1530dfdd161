/// The last `length` intervals of one series, summed, as intervals arrive one by one.
///
/// Adding the newest interval and subtracting the one that leaves keeps the sum exact at a cost that does
/// not depend on the window's length. Each interval's latencies are kept serialized (a few hundred bytes
/// for a typical interval, where a live histogram takes tens of kilobytes), so a one-hour window of
/// one-second intervals stays small.
struct SlidingWindow: Sendable {
    private struct Slice: Sendable {
        var count: Int
        var errors: Int
        var histogram: String?
    }

    let length: Int
    let keepsLatency: Bool
    private var ring: [Slice] = []
    private var next = 0
    private(set) var histogram = Histogram()
    private(set) var count = 0
    private(set) var errors = 0
    /// Intervals seen so far; the window is full once this reaches `length`.
    private(set) var seen = 0

    /// - Parameter keepsLatency: whether the window needs the latency distribution (percentile bounds)
    ///   or only counts.
    init(length: Int, keepsLatency: Bool) {
        precondition(length > 0)
        self.length = length
        self.keepsLatency = keepsLatency
        ring.reserveCapacity(length)
    }

    var isFull: Bool { seen >= length }

    /// Slides the window on by one interval holding `samples`.
    mutating func push(_ samples: MetricSamples) {
        let slice = Slice(
            count: samples.count, errors: samples.errors,
            histogram: keepsLatency && samples.count > 0 ? samples.histogram.serialized() : nil)
        if ring.count < length {
            ring.append(slice)
        } else {
            let leaving = ring[next]
            count -= leaving.count
            errors -= leaving.errors
            // Our own serialization of a histogram we merged: decoding cannot fail.
            if let text = leaving.histogram, let old = try? Histogram(serialized: text) { histogram.subtract(old) }
            ring[next] = slice
        }
        next = (next + 1) % length
        count += samples.count
        errors += samples.errors
        if keepsLatency { histogram.merge(samples.histogram) }
        seen += 1
    }
}
