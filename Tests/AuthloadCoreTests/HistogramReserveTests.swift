import Testing

@testable import AuthloadCore

@Suite("Histograms sized ahead, and percentiles read between the extremes")
struct HistogramReserveTests {
    /// A few small sets of latencies, slow and fast, as an interval's series holds.
    static let sets: [[Int]] = [
        [1],
        [3_000, 3_001, 3_002],
        [40_000, 40_500, 80_000, 1_200_000, 40_100],
        [2_047, 2_048, 2_049, 5_000_000, 17, 17, 17],
        Array(stride(from: 90_000, through: 900_000, by: 7_919))
    ]

    /// What a percentile is by definition: the highest value of the slot of the sample of that rank, capped at the
    /// maximum, and the exact extremes at the first and the last rank.
    static func expected(_ sorted: [Int], percentile p: Double) -> Int {
        let rank = min(max(Int((p * Double(sorted.count) / 100).rounded(.up)), 1), sorted.count)
        if rank == 1 { return sorted[0] }
        if rank == sorted.count { return sorted[sorted.count - 1] }
        return min(Histogram.highestValue(inSlot: Histogram.index(of: sorted[rank - 1])), sorted[sorted.count - 1])
    }

    @Test("a percentile is that of the sample of its rank, wherever in the slots the samples sit", arguments: sets)
    func percentilesByRank(values: [Int]) {
        var histogram = Histogram()
        for value in values { histogram.record(value) }
        let sorted = values.sorted()
        for p in [0.0, 1, 25, 50, 75, 90, 95, 99, 99.9, 100] {
            #expect(histogram.value(atPercentile: p) == Self.expected(sorted, percentile: p), "p\(p) of \(values)")
        }
    }

    @Test("percentiles read in one pass are each the one asked alone", arguments: sets)
    func percentilesInOnePass(values: [Int]) {
        var histogram = Histogram()
        for value in values { histogram.record(value) }
        let percentiles = [0.0, 1, 25, 50, 50, 75, 90, 95, 99, 99.9, 100]
        #expect(histogram.values(atPercentiles: percentiles) == percentiles.map { histogram.value(atPercentile: $0) })
        #expect(histogram.values(atPercentiles: percentiles) == percentiles.map { Self.expected(values.sorted(), percentile: $0) })
        #expect(Histogram().values(atPercentiles: [50, 99]) == [0, 0])
        #expect(histogram.values(atPercentiles: []) == [])
    }

    @Test("after the fast samples are subtracted, percentiles read the slow ones that are left")
    func percentilesAfterSubtracting() {
        var fast = Histogram()
        for value in [5, 6, 7, 900] { fast.record(value) }
        var all = fast
        let slow = [250_000, 260_000, 300_000, 1_000_000]
        for value in slow { all.record(value) }
        all.subtract(fast)
        #expect(all.totalCount == 4)
        #expect(all.value(atPercentile: 50) == Self.expected(slow, percentile: 50))
        #expect(all.value(atPercentile: 75) == Self.expected(slow, percentile: 75))
        #expect(all.value(atPercentile: 100) == 1_000_000)
    }

    @Test("a histogram that reserved its slots records exactly as one that grew, and never grows below them", arguments: sets)
    func reservedRecordsTheSame(values: [Int]) throws {
        var grown = Histogram()
        for value in values { grown.record(value) }
        var reserved = Histogram(reserving: grown.reservedSlots)
        #expect(reserved.isEmpty && reserved.reservedSlots == grown.reservedSlots)
        for value in values { reserved.record(value) }
        #expect(reserved.reservedSlots == grown.reservedSlots)
        #expect(reserved == grown)
        #expect(reserved.serialized() == grown.serialized())
        #expect(reserved.mean == grown.mean && reserved.min == grown.min && reserved.max == grown.max)
        #expect(try Histogram(serialized: reserved.serialized()) == grown)
        var merged = Histogram(reserving: 0..<4_096)
        merged.merge(reserved)
        #expect(merged == grown)
    }

    @Test("a merge of sparse samples over a histogram holding others in and around their range equals recording all")
    func sparseMergeIsExact() {
        let mine = [1, 900, 40_000, 41_000, 2_500_000, 70_000_000]
        let theirs = [3_000, 40_000, 1_999_999, 2_000_000]
        var merged = Histogram()
        for value in mine { merged.record(value) }
        var other = Histogram()
        for value in theirs { other.record(value) }
        merged.merge(other)
        var all = Histogram()
        for value in mine + theirs { all.record(value) }
        #expect(merged == all)
        #expect(merged.serialized() == all.serialized())
        for p in [10.0, 30, 50, 70, 90] { #expect(merged.value(atPercentile: p) == Self.expected((mine + theirs).sorted(), percentile: p)) }
    }

    @Test("reserving more slots than a histogram has stops at its first and last ones; none reserves nothing")
    func reservationIsBounded() {
        #expect(Histogram(reserving: 0..<(1 << 40)).reservedSlots == 0..<Histogram.slotCount)
        #expect(Histogram(reserving: -9..<(1 << 40)).reservedSlots == 0..<Histogram.slotCount)
        #expect(Histogram(reserving: 0..<0).reservedSlots.isEmpty)
        #expect(Histogram(reserving: -5..<0).reservedSlots.isEmpty)
        var top = Histogram(reserving: 0..<(1 << 40))
        top.record(Histogram.highestTrackableValue)
        #expect(top.max == Histogram.highestTrackableValue && top.totalCount == 1)
    }
}

@Suite("A shard sizes each interval's histograms like the interval before")
struct ShardReserveTests {
    @Test("a new interval, and the first after a take, reserve what the newest one reached; samples stay exact")
    func newIntervalsReserve() {
        var slots = ShardSlots()
        #expect(slots.reserved.isEmpty)
        slots.update(0, metricCount: 3) { $0.record(metric: 0, latencyMicros: 900_000, outcome: .ok) }
        slots.update(0, metricCount: 3) { $0.record(metric: 2, latencyMicros: 40, outcome: .ok) }
        var alone = Histogram()
        alone.record(900_000)
        var fast = Histogram()
        fast.record(40)
        // Interval 1's series 0 takes interval 0's window and grows it down to its 12 µs sample.
        var both = alone
        both.record(12)
        // Moving on to interval 1 takes interval 0's sizes; metric 1 saw nothing and reserves nothing.
        slots.update(1, metricCount: 3) { $0.record(metric: 0, latencyMicros: 12, outcome: Outcome(.httpError, "503")) }
        #expect(slots.reserved == [alone.reservedSlots, 0..<0, fast.reservedSlots])
        let taken = slots.take()
        #expect(taken[1]?.metrics[0]?.histogram.reservedSlots == both.reservedSlots)
        #expect(taken[1]?.metrics[0]?.count == 1 && taken[1]?.metrics[0]?.errors == 1)
        #expect(taken[1]?.metrics[0]?.histogram.max == 12)
        #expect(taken[0]?.metrics[0]?.histogram == alone)
        #expect(taken[1]?.metrics[2] == nil)
        // The collector takes every interval: the sizes outlive it, from the newest interval taken, where metric 2,
        // absent, keeps what it reserved.
        #expect(slots.reserved == [both.reservedSlots, 0..<0, fast.reservedSlots])
        slots.update(2, metricCount: 3) { $0.record(metric: 0, latencyMicros: 7, outcome: .ok) }
        let next = slots.take()
        #expect(next[2]?.metrics[0]?.histogram.reservedSlots == both.reservedSlots)
        #expect(next[2]?.metrics[0]?.histogram.value(atPercentile: 50) == 7)
        slots.update(3, metricCount: 3) { $0.record(metric: 2, latencyMicros: 300, outcome: .ok) }
        // Metric 2 starts from the window it kept, grown to hold its 300 µs sample.
        var kept = Histogram(reserving: fast.reservedSlots)
        kept.record(300)
        #expect(kept.reservedSlots != fast.reservedSlots)
        #expect(slots.take()[3]?.metrics[2]?.histogram.reservedSlots == kept.reservedSlots)
    }
}

@Suite("A histogram's counts hold a window of its slots")
struct HistogramWindowTests {
    /// Recording in this order grows the window up, down and both ways at once.
    static let orders: [[Int]] = [
        [900_000, 12, 3_000_000, 2_047, 2_048, 70_000_000],
        [1, Histogram.highestTrackableValue, 5_000],
        [40_000, 39_000, 41_000, 1_000, 2_000_000]
    ]

    @Test("the window holds every recorded slot, and nothing else tells it apart from one recorded in another order", arguments: orders)
    func windowGrowsBothWays(values: [Int]) throws {
        var histogram = Histogram()
        for value in values { histogram.record(value) }
        var sorted = Histogram()
        for value in values.sorted() { sorted.record(value) }
        for value in values { #expect(histogram.reservedSlots.contains(Histogram.index(of: value))) }
        #expect(histogram.reservedSlots.lowerBound % 256 == 0)
        #expect(histogram == sorted && histogram.serialized() == sorted.serialized())
        #expect(try Histogram(serialized: histogram.serialized()) == histogram)
        for value in values {
            #expect(
                histogram.count(inSlot: Histogram.index(of: value))
                    == values.filter { Histogram.index(of: $0) == Histogram.index(of: value) }.count)
        }
        #expect(histogram.count(inSlot: -1) == 0 && histogram.count(inSlot: Histogram.slotCount) == 0)
    }

    @Test("merging and subtracting histograms whose windows overlap, hold one another or lie apart is exact")
    func mergeAcrossWindows() {
        let groups = [[5, 6, 7], [3_000_000, 2_900_000], [40_000, 45_000, 3_000_001], [1, 70_000_000]]
        var all = Histogram()
        var parts: [Histogram] = []
        for group in groups {
            var part = Histogram()
            for value in group { part.record(value) }
            parts.append(part)
            all.merge(part)
        }
        var recorded = Histogram()
        for value in groups.joined() { recorded.record(value) }
        #expect(all == recorded && all.serialized() == recorded.serialized())
        // Take the fast and the slowest samples back out: what is left counts as the middle ones recorded alone, its
        // extremes the bounds of their slots (a subtraction knows slots, not values).
        all.subtract(parts[0])
        all.subtract(parts[3])
        var middle = Histogram()
        for value in groups[1] + groups[2] { middle.record(value) }
        #expect(all.totalCount == middle.totalCount && all.mean == middle.mean)
        #expect((0..<Histogram.slotCount).allSatisfy { all.count(inSlot: $0) == middle.count(inSlot: $0) })
        #expect(all.max == Histogram.highestValue(inSlot: Histogram.index(of: 3_000_001)))
        #expect(Histogram.index(of: all.min) == Histogram.index(of: 40_000))
        for p in [10.0, 50, 60] { #expect(all.value(atPercentile: p) == middle.value(atPercentile: p)) }
        #expect(all.values(atPercentiles: [25, 50, 60]) == middle.values(atPercentiles: [25, 50, 60]))
    }

    @Test("cumulative counts of a histogram whose window starts high count every sample under its bound")
    func cumulativeCountsOfAHighWindow() {
        var histogram = Histogram()
        for value in [1_000_000, 1_500_000, 2_500_000] { histogram.record(value) }
        #expect(histogram.reservedSlots.lowerBound > 0)
        #expect(histogram.cumulativeCounts(atOrBelow: [500_000, 1_000_000, 2_000_000, 3_000_000]) == [0, 1, 2, 3])
    }
}
