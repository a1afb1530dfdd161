#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A latency distribution in microseconds, kept to three significant digits from 1 µs to about 19 hours.
///
/// Slots follow HdrHistogram's layout for three digits: below 2048 µs every value has its own slot;
/// above, each doubling of the value is split into 1024 equal slots, so a slot is never wider than
/// 1/1024 of the values in it and every percentile is within 0.098 % of the exact one. The counts
/// hold only a window of the slots, grown on demand to the lowest and highest recorded so far (216 KB
/// at most): many histograms are alive at once, and an interval's few hundred samples of a one-second
/// flow fill a thousand slots of the eleven thousand below them.
///
/// It is a value type so that each recorder owns its copy and records without locks or actor hops;
/// shards are combined with ``merge(_:)``, which is exact.
///
/// ```swift
/// var latencies = Histogram()
/// latencies.record(1_250)                      // µs
/// latencies.record(980, count: 3)
/// latencies.value(atPercentile: 99)            // 1_250
/// let text = latencies.serialized()            // stored in result.json
/// let back = try Histogram(serialized: text)   // back == latencies
/// ```
public struct Histogram: Sendable, Equatable {
    /// The largest value kept apart (2^36 − 1 µs, about 19 hours); larger values are recorded as this one,
    /// so that a stuck request still counts in the total and shows up as the maximum.
    @inlinable public static var highestTrackableValue: Int { (1 << 36) - 1 }

    /// Counts of the slots `base ..< base + counts.count`, a window that holds every recorded slot; the slots
    /// outside it are empty.
    @usableFromInline internal var counts: [Int] = []
    /// The slot that `counts[0]` counts.
    @usableFromInline internal var base = 0
    @usableFromInline internal var total = 0
    /// Exact sum of the recorded (clamped) values. It wraps instead of trapping on the hot path;
    /// wrapping would take 2^63 µs (about 292,000 years) of summed latency.
    @usableFromInline internal var sum = 0
    /// `Int.max` while empty, so that the first value always becomes the minimum.
    @usableFromInline internal var lowest = Int.max
    @usableFromInline internal var highest = 0

    public init() {}

    /// An empty histogram whose counts already hold the slots of `window` (those of it that exist), so that
    /// recording values in it never grows it: an interval's histogram sized like the one before it is allocated
    /// once instead of being copied into a larger buffer each time a value outside arrives.
    init(reserving window: Range<Int>) {
        let window = window.clamped(to: 0..<Self.slotCount)
        guard !window.isEmpty else { return }
        counts = Array(repeating: 0, count: window.count)
        base = window.lowerBound
    }

    /// The slots the counts hold now, for sizing a histogram like this one (``init(reserving:)``).
    var reservedSlots: Range<Int> { base..<(base + counts.count) }

    /// How many samples slot `index` holds.
    func count(inSlot index: Int) -> Int {
        reservedSlots.contains(index) ? counts[index - base] : 0
    }

    /// Slot of a value in `1...highestTrackableValue`: the bit length picks the bucket and the top
    /// 11 significant bits the slot in it (53 = 64 − 11); values below 2048 land on their own index.
    @inlinable static func index(of value: Int) -> Int {
        let bucket = 53 - (value | 2047).leadingZeroBitCount
        return (bucket << 10) + (value >> bucket)
    }

    /// The largest value that lands in slot `index`; percentiles report it so that they never understate.
    static func highestValue(inSlot index: Int) -> Int {
        let bucket = Swift.max((index >> 10) - 1, 0)
        return ((index - (bucket << 10) + 1) << bucket) - 1
    }

    /// Slots needed to reach ``highestTrackableValue``: 27,648.
    static var slotCount: Int { index(of: highestTrackableValue) + 1 }

    /// Adds one sample of `value` microseconds.
    ///
    /// Values below 1 are recorded as 1, values above ``highestTrackableValue`` as that value.
    @inlinable public mutating func record(_ value: Int) {
        record(value, count: 1)
    }

    /// Adds `count` samples of `value` microseconds, clamped as in ``record(_:)``; `count` must not be negative.
    @inlinable public mutating func record(_ value: Int, count: Int) {
        precondition(count >= 0, "histogram: negative count \(count)")
        guard count > 0 else { return }
        let value = Swift.min(Swift.max(value, 1), Self.highestTrackableValue)
        let index = Self.index(of: value)
        // One unsigned comparison for both ends of the window.
        if UInt(bitPattern: index &- base) >= UInt(counts.count) { grow(toInclude: index..<(index + 1)) }
        counts[index &- base] &+= count
        total &+= count
        sum &+= value &* count
        if value < lowest { lowest = value }
        if value > highest { highest = value }
    }

    /// Widens the window to hold `slots` too, out to whole blocks of 256 slots (2 KB), so that a run grows it a few
    /// times at most.
    @usableFromInline mutating func grow(toInclude slots: Range<Int>) {
        let wanted = (slots.lowerBound & ~255)..<Swift.min(((slots.upperBound - 1) | 255) + 1, Self.slotCount)
        if counts.isEmpty { base = wanted.lowerBound }
        let window = Swift.min(base, wanted.lowerBound)..<Swift.max(base + counts.count, wanted.upperBound)
        // Exact capacity, not Array's doubling: a histogram grows a few times at most, and many are alive at once. One
        // new buffer, the old counts copied in and the rest zeroed: appending an array of zeros made and zeroed a
        // second one, and through pointers it stays fast in debug builds too.
        let old = counts
        let shift = base - window.lowerBound
        counts = Array(unsafeUninitializedCapacity: window.count) { buffer, initialized in
            let start = buffer.baseAddress!
            start.initialize(repeating: 0, count: shift)
            old.withUnsafeBufferPointer { source in
                if let first = source.baseAddress { (start + shift).initialize(from: first, count: source.count) }
            }
            (start + shift + old.count).initialize(repeating: 0, count: window.count - shift - old.count)
            initialized = window.count
        }
        base = window.lowerBound
    }

    public var totalCount: Int { total }
    public var isEmpty: Bool { total == 0 }
    /// The smallest recorded value, exactly; 0 when empty.
    public var min: Int { isEmpty ? 0 : lowest }
    /// The largest recorded value, exactly; 0 when empty.
    public var max: Int { highest }
    /// The exact mean of the recorded values (from a running sum, not from slot midpoints); 0 when empty.
    public var mean: Double { isEmpty ? 0 : Double(sum) / Double(total) }

    /// The value below or at which `p` percent of the samples fall, for `p` in `0...100`.
    ///
    /// It is the sample of rank `max(1, ⌈p/100 × count⌉)` in sorted order, reported as the highest value of
    /// its slot (never more than 0.098 % above it) and capped at ``max``. The ends are exact: a rank of 1
    /// is ``min`` and the last rank is ``max``. Returns 0 when empty.
    public func value(atPercentile p: Double) -> Int {
        guard !isEmpty else { return 0 }
        let target = rank(atPercentile: p)
        if target == 1 { return lowest }
        if target == total { return highest }
        // Only the slots between the extremes hold samples: an interval's few hundred samples fill a few of the
        // thousands of slots below its slowest one, and the time series asks four percentiles of every row.
        let filled = filledSlots
        let slot = counts.withUnsafeBufferPointer { counts in
            Self.offset(reaching: target, in: counts, from: filled.lowerBound - base, to: filled.upperBound - base, seen: 0)
        }
        return slot.map { Swift.min(Self.highestValue(inSlot: $0.offset + base), highest) } ?? highest
    }

    /// The first offset in `counts[start..<end]` where the running count, `seen` before `start`, reaches `target`, and
    /// the count there; nil when it never does.
    ///
    /// Blocks of eight slots that cannot reach it are skipped on their sum, a loop the compiler vectorizes: an interval's
    /// histogram of a slow flow spans thousands of mostly empty slots, and the time series reads three percentiles of
    /// every row of every series (a slot at a time, 0.9 % of a simulated day's CPU).
    @inline(__always)
    private static func offset(
        reaching target: Int, in counts: UnsafeBufferPointer<Int>, from start: Int, to end: Int, seen before: Int
    ) -> (offset: Int, seen: Int)? {
        var offset = start
        var seen = before
        while end &- offset >= 8 {
            var block = 0
            for lane in 0..<8 { block &+= counts[offset &+ lane] }
            if seen &+ block >= target { break }
            seen &+= block
            offset &+= 8
        }
        while offset < end {
            seen &+= counts[offset]
            if seen >= target { return (offset, seen) }
            offset &+= 1
        }
        return nil
    }

    /// ``value(atPercentile:)`` of each of `percentiles`, which must be in ascending order, read in one pass over
    /// the slots: the time series asks three of every row.
    public func values(atPercentiles percentiles: [Double]) -> [Int] {
        precondition(zip(percentiles, percentiles.dropFirst()).allSatisfy { $0 <= $1 }, "histogram: percentiles out of order")
        guard !isEmpty else { return percentiles.map { _ in 0 } }
        let filled = filledSlots
        return counts.withUnsafeBufferPointer { counts in
            // The slot reached so far (an offset in `counts`) and the samples up to it, its own included.
            var offset = filled.lowerBound - base
            var seen = counts[offset]
            return percentiles.map { p in
                let target = rank(atPercentile: p)
                if target == 1 { return lowest }
                if target == total { return highest }
                if seen < target {
                    guard let next = Self.offset(reaching: target, in: counts, from: offset + 1, to: filled.upperBound - base, seen: seen)
                    else { return highest }
                    (offset, seen) = next
                }
                return Swift.min(Self.highestValue(inSlot: offset + base), highest)
            }
        }
    }

    private func rank(atPercentile p: Double) -> Int {
        precondition(!p.isNaN, "histogram: percentile is NaN")
        let p = Swift.min(Swift.max(p, 0), 100)
        // Multiplying before dividing keeps e.g. 99.9 % of 1,000,000 at exactly 999,000.
        let rank = (p * Double(total) / 100).rounded(.up)
        return Swift.min(Swift.max(Int(rank), 1), total)
    }

    /// Points for a percentile-distribution plot: 0, 50, 75, 87.5, … halving the distance to 100 until
    /// 99.9999 or the last sample is reached, then 100. At most 21 points; none when empty.
    public func percentileDistribution() -> [(percentile: Double, value: Int)] {
        guard !isEmpty else { return [] }
        var points: [(percentile: Double, value: Int)] = []
        var remaining = 100.0
        while 100 - remaining <= 99.9999 {
            let p = 100 - remaining
            points.append((p, value(atPercentile: p)))
            if rank(atPercentile: p) == total { break }
            remaining /= 2
        }
        points.append((100, highest))
        return points
    }

    /// Adds every sample of `other`, exactly as if they had been recorded here.
    public mutating func merge(_ other: Histogram) {
        guard !other.isEmpty else { return }
        // Only the slots between the other's extremes hold samples: an interval's histogram of a few hundred samples
        // spans a few of its thousands of slots. Every slot of the range is added, empty or not: a loop without a
        // branch is vectorized, and the collector merges each series' interval into the totals every tick.
        let filled = other.filledSlots
        if !reservedSlots.contains(filled) { grow(toInclude: filled) }
        // Raw buffers: the collector merges thousands of these per tick, and `enumerated()`
        // costs generic-metadata lookups per element in debug builds (the test suite's mode).
        counts.withUnsafeMutableBufferPointer { mine in
            other.counts.withUnsafeBufferPointer { theirs in
                let target = mine.baseAddress! + (filled.lowerBound - base)
                let source = theirs.baseAddress! + (filled.lowerBound - other.base)
                for offset in 0..<filled.count { target[offset] &+= source[offset] }
            }
        }
        total &+= other.total
        sum &+= other.sum
        lowest = Swift.min(lowest, other.lowest)
        highest = Swift.max(highest, other.highest)
    }

    /// The slots that can hold samples: those of the smallest and the largest value and every one between. Every way
    /// of filling a histogram keeps its extremes in its first and last filled slots (recording, merging, subtracting,
    /// decoding, which checks it).
    @usableFromInline var filledSlots: Range<Int> {
        isEmpty ? 0..<0 : Self.index(of: lowest)..<(Self.index(of: highest) + 1)
    }

    /// Removes every sample of `other`, which must have been merged into this histogram before.
    ///
    /// A sliding window adds the newest interval and subtracts the oldest. Counts, total and sum stay
    /// exact; `min` and `max` become the bounds of the lowest and highest slot still holding samples.
    public mutating func subtract(_ other: Histogram) {
        guard !other.isEmpty else { return }
        let filled = other.filledSlots
        precondition(reservedSlots.contains(filled) && other.total <= total, "subtracting samples never merged")
        counts.withUnsafeMutableBufferPointer { mine in
            other.counts.withUnsafeBufferPointer { theirs in
                for index in filled where theirs[index - other.base] != 0 { mine[index - base] &-= theirs[index - other.base] }
            }
        }
        // What still holds samples lies between this histogram's extremes, as before the subtraction.
        let before = filledSlots
        total &-= other.total
        sum &-= other.sum
        let held = (before.lowerBound - base)..<(before.upperBound - base)
        guard total > 0, let firstHeld = counts[held].firstIndex(where: { $0 != 0 }),
            let lastHeld = counts[held].lastIndex(where: { $0 != 0 })
        else {
            lowest = .max
            highest = 0
            return
        }
        let (first, last) = (firstHeld + base, lastHeld + base)
        // Exact while the old extreme's slot still holds samples; else the bound of the slot that does.
        if Self.index(of: lowest) != first { lowest = first == 0 ? 1 : Self.highestValue(inSlot: first - 1) + 1 }
        if Self.index(of: highest) != last { highest = Self.highestValue(inSlot: last) }
    }

    /// Same samples, regardless of how far each side's counts have grown.
    public static func == (a: Histogram, b: Histogram) -> Bool {
        guard a.total == b.total, a.sum == b.sum, a.min == b.min, a.max == b.max else { return false }
        let (one, other) = (a.reservedSlots, b.reservedSlots)
        let either = Swift.min(one.lowerBound, other.lowerBound)..<Swift.max(one.upperBound, other.upperBound)
        return either.allSatisfy { a.count(inSlot: $0) == b.count(inSlot: $0) }
    }
}

// MARK: - Serialization

extension Histogram {
    /// Version 1: 3 significant digits, 27,648 slots, top value 2^36 − 1.
    static var formatVersion: UInt8 { 1 }

    /// A compact base64 text holding every sample exactly, for `result.json` and for merging across runs.
    ///
    /// Bytes: the format version, then LEB128 varints for sum, min and max, then one zig-zag varint per
    /// slot up to the last non-empty one, where a run of empty slots is written once as its negated length.
    /// A million lognormal latencies (median 20 ms, σ = 1) take about 20 KB of text.
    public func serialized() -> String {
        var bytes: [UInt8] = [Self.formatVersion]
        Self.appendVarint(UInt64(UInt(bitPattern: sum)), to: &bytes)
        Self.appendVarint(UInt64(min), to: &bytes)
        Self.appendVarint(UInt64(max), to: &bytes)
        // The slots below the window are empty.
        var emptyRun = base
        for count in counts.prefix((counts.lastIndex { $0 != 0 } ?? -1) + 1) {
            if count == 0 {
                emptyRun += 1
                continue
            }
            if emptyRun > 0 { Self.appendVarint(Self.zigzag(-emptyRun), to: &bytes) }
            emptyRun = 0
            Self.appendVarint(Self.zigzag(count), to: &bytes)
        }
        return Data(bytes).base64EncodedString()
    }

    /// Reads a histogram written by ``serialized()``.
    ///
    /// - Throws: ``HistogramDecodingError`` naming what is wrong and, for the encoded counts, at which byte
    ///   of the base64-decoded data; it checks that min, max and sum agree with the counts.
    public init(serialized text: String) throws {
        guard let data = Data(base64Encoded: text) else { throw HistogramDecodingError(code: .notBase64) }
        var reader = ByteReader(bytes: [UInt8](data))
        guard let version = reader.bytes.first else { throw HistogramDecodingError(code: .empty) }
        guard version == Self.formatVersion else { throw HistogramDecodingError(code: .version(Int(version))) }
        reader.offset = 1
        self.init()
        let sum = Int(bitPattern: UInt(try reader.varint()))
        let lowest = try reader.varint()
        let highest = try reader.varint()
        guard lowest <= highest, highest <= UInt64(Self.highestTrackableValue) else {
            throw HistogramDecodingError(code: .inconsistent("min \(lowest) and max \(highest) are out of order or range"))
        }
        // The counts lie between the extremes' slots (``validate`` checks it): one window for all of them.
        if highest > 0 { self = Histogram(reserving: Self.index(of: Int(Swift.max(lowest, 1)))..<(Self.index(of: Int(highest)) + 1)) }
        var slot = 0
        var filled: ClosedRange<Int>?
        while reader.offset < reader.bytes.count {
            let start = reader.offset
            let count = Self.unzigzag(try reader.varint())
            if count < 0 {
                guard count.magnitude <= UInt(Self.slotCount - slot) else {
                    throw HistogramDecodingError(code: .atByte("empty run past the top slot", start))
                }
                slot += Int(count.magnitude)
                continue
            }
            guard count > 0 else { throw HistogramDecodingError(code: .atByte("zero count", start)) }
            guard slot < Self.slotCount else { throw HistogramDecodingError(code: .atByte("count past the top slot", start)) }
            let (newTotal, overflow) = total.addingReportingOverflow(count)
            guard !overflow else { throw HistogramDecodingError(code: .atByte("total count overflows", start)) }
            if !reservedSlots.contains(slot) { grow(toInclude: slot..<(slot + 1)) }
            counts[slot - base] = count
            total = newTotal
            filled = (filled?.lowerBound ?? slot)...slot
            slot += 1
        }
        try validate(sum: sum, lowest: Int(lowest), highest: Int(highest), filled: filled)
    }

    /// Rejects headers that disagree with the counts (`filled`: first to last non-empty slot), so that
    /// a damaged text cannot report a wrong min, max or mean.
    private mutating func validate(sum: Int, lowest: Int, highest: Int, filled: ClosedRange<Int>?) throws {
        guard let filled else {
            guard sum == 0, lowest == 0, highest == 0 else {
                throw HistogramDecodingError(code: .inconsistent("no counts but min, max or sum is not 0"))
            }
            return
        }
        guard lowest >= 1, Self.index(of: lowest) == filled.lowerBound, Self.index(of: highest) == filled.upperBound else {
            throw HistogramDecodingError(code: .inconsistent("min \(lowest) or max \(highest) does not match the counts"))
        }
        let (top, overflow) = highest.multipliedReportingOverflow(by: total)
        guard overflow || (lowest * total...top).contains(sum) else {
            throw HistogramDecodingError(code: .inconsistent("sum \(sum) is outside min × count ... max × count"))
        }
        (self.sum, self.lowest, self.highest) = (sum, lowest, highest)
    }

    private static func zigzag(_ value: Int) -> UInt64 {
        UInt64(UInt(bitPattern: (value << 1) ^ (value >> (Int.bitWidth - 1))))
    }

    private static func unzigzag(_ value: UInt64) -> Int {
        Int(bitPattern: UInt(value >> 1)) ^ -Int(value & 1)
    }

    private static func appendVarint(_ value: UInt64, to bytes: inout [UInt8]) {
        var rest = value
        while rest >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: rest) | 0x80)
            rest >>= 7
        }
        bytes.append(UInt8(rest))
    }
}

/// Walks the decoded bytes, remembering where each varint started so that errors can point at it.
private struct ByteReader {
    let bytes: [UInt8]
    var offset = 0

    /// Unsigned LEB128: seven bits per byte, low bits first, high bit set on all but the last byte.
    mutating func varint() throws -> UInt64 {
        let start = offset
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            guard offset < bytes.count else { throw HistogramDecodingError(code: .atByte("truncated varint", start)) }
            let byte = bytes[offset]
            offset += 1
            // The tenth byte may only supply the 64th bit.
            guard shift < 63 || byte <= 1 else { throw HistogramDecodingError(code: .atByte("varint overflows 64 bits", start)) }
            value |= UInt64(byte & 0x7f) << shift
            if byte & 0x80 == 0 { return value }
            shift += 7
        }
    }
}

/// Why a serialized histogram could not be read, e.g. `histogram: truncated varint at byte 37`.
///
/// Byte offsets count from the start of the base64-decoded data.
public struct HistogramDecodingError: Error, Sendable, Hashable, CustomStringConvertible {
    fileprivate enum Code: Sendable, Hashable {
        case notBase64, empty
        case version(Int)
        case atByte(String, Int)
        case inconsistent(String)
    }

    fileprivate let code: Code

    public var description: String {
        switch code {
        case .notBase64: "histogram: not valid base64"
        case .empty: "histogram: empty input"
        case .version(let version): "histogram: unsupported format version \(version) (expected \(Histogram.formatVersion))"
        case .atByte(let problem, let offset): "histogram: \(problem) at byte \(offset)"
        case .inconsistent(let problem): "histogram: \(problem)"
        }
    }
}
