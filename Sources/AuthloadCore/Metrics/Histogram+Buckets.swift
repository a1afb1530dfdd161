extension Histogram {
    /// How many samples are at or below each bound (microseconds, ascending), for fixed-bucket exports such
    /// as Prometheus histograms.
    ///
    /// A sample counts under a bound when the lowest value of its slot is at or below it: a sample exactly on
    /// a bound (a server that answers in exactly 100 ms) counts under it, and one within a slot's width
    /// (0.1 %) above a bound may count under it too.
    public func cumulativeCounts(atOrBelow bounds: [Int]) -> [Int] {
        var result = Array(repeating: 0, count: bounds.count)
        guard !isEmpty else { return result }
        var bound = 0
        var seen = 0
        for (offset, count) in counts.enumerated() where count > 0 {
            let index = base + offset
            let value = Swift.max(index == 0 ? 0 : Self.highestValue(inSlot: index - 1) + 1, lowest)
            while bound < bounds.count, bounds[bound] < value {
                result[bound] = seen
                bound += 1
            }
            seen += count
        }
        while bound < bounds.count {
            result[bound] = seen
            bound += 1
        }
        return result
    }

    /// The exact sum of the recorded values, in microseconds.
    public var sumMicros: Int { sum }
}
