import AuthloadCore
import Foundation
import Testing

@Suite("HDR histogram")
struct HistogramTests {
    @Test("percentiles of a million lognormal latencies are within 0.1 % of an exact sort", arguments: [50.0, 90, 99, 99.9])
    func percentilesMatchExactSort(p: Double) {
        let exact = Samples.exactPercentile(p)
        let measured = Samples.histogram.value(atPercentile: p)
        #expect(Samples.relativeError(measured, exact) <= 0.001, "p\(p): histogram \(measured) µs, exact \(exact) µs")
    }

    @Test("min, max, mean and count of a million samples are exact")
    func summaryIsExact() {
        let samples = Samples.lognormal
        #expect(Samples.histogram.totalCount == samples.count)
        #expect(Samples.histogram.min == Samples.sorted.first)
        #expect(Samples.histogram.max == Samples.sorted.last)
        #expect(Samples.histogram.mean == Double(samples.reduce(0, +)) / Double(samples.count))
        #expect(Samples.histogram.value(atPercentile: 100) == Samples.sorted.last)
    }

    @Test("merging two halves equals recording every sample into one histogram")
    func mergeIsExact() {
        let half = Samples.lognormal.count / 2
        var merged = Histogram()
        for value in Samples.lognormal[..<half] { merged.record(value) }
        var second = Histogram()
        for value in Samples.lognormal[half...] { second.record(value) }
        merged.merge(second)

        #expect(merged == Samples.histogram)
        #expect(merged.mean == Samples.histogram.mean)
        for p in [0.0, 50, 90, 99, 99.9, 99.99, 100] {
            #expect(merged.value(atPercentile: p) == Samples.histogram.value(atPercentile: p))
        }
        var alone = Samples.histogram
        alone.merge(Histogram())
        #expect(alone == Samples.histogram)
        var fromEmpty = Histogram()
        fromEmpty.merge(second)
        #expect(fromEmpty == second)
    }

    @Test("serialization round-trips exactly and stays small")
    func serializationRoundTrips() throws {
        let text = Samples.histogram.serialized()
        print("serialized 1,000,000-sample lognormal histogram: \(text.utf8.count) bytes of base64")
        #expect(text.utf8.count < 40_000)
        #expect(try Histogram(serialized: text) == Samples.histogram)

        #expect(try Histogram(serialized: Histogram().serialized()) == Histogram())
        var ends = Histogram()
        ends.record(1)
        ends.record(Histogram.highestTrackableValue, count: 3)
        #expect(try Histogram(serialized: ends.serialized()) == ends)
    }

    @Test("values from 1 µs to one hour keep min and max exact and every percentile within 0.1 %")
    func fullRangeIsTracked() {
        var values: [Int] = []
        var value = 1.0
        while value < 3_600_000_000 {
            values.append(Int(value))
            value = value * 1.003 + 1
        }
        values.append(3_600_000_000)
        var histogram = Histogram()
        for value in values { histogram.record(value) }
        let sorted = values.sorted()

        #expect(histogram.min == 1)
        #expect(histogram.max == 3_600_000_000)
        #expect(histogram.value(atPercentile: 0) == 1)
        #expect(histogram.value(atPercentile: 100) == 3_600_000_000)
        for p in stride(from: 0.0, through: 100, by: 0.25) {
            let exact = Samples.exactPercentile(p, of: sorted)
            let measured = histogram.value(atPercentile: p)
            #expect(Samples.relativeError(measured, exact) <= 0.001, "p\(p): histogram \(measured), exact \(exact)")
        }
    }

    @Test(
        "values outside 1 µs … highestTrackableValue are clamped to the nearest end",
        arguments: [
            (0, 1), (-7, 1), (Int.min, 1),
            (Histogram.highestTrackableValue, Histogram.highestTrackableValue),
            (Histogram.highestTrackableValue + 1, Histogram.highestTrackableValue),
            (Int.max, Histogram.highestTrackableValue)
        ])
    func valuesAreClamped(value: Int, recordedAs expected: Int) throws {
        var histogram = Histogram()
        histogram.record(value, count: 2)
        #expect(histogram.totalCount == 2)
        #expect(histogram.min == expected)
        #expect(histogram.max == expected)
        #expect(histogram.mean == Double(expected))
        #expect(histogram.value(atPercentile: 50) == expected)
        #expect(try Histogram(serialized: histogram.serialized()) == histogram)
    }

    @Test("recording a value with a count equals recording it that many times")
    func countIsRepetition() {
        var counted = Histogram()
        counted.record(1_234, count: 3)
        counted.record(9, count: 0)
        var repeated = Histogram()
        for _ in 0..<3 { repeated.record(1_234) }
        #expect(counted == repeated)
        #expect(counted.min == 1_234 && counted.totalCount == 3)
    }

    @Test("an empty histogram reports zeros")
    func emptyReportsZeros() {
        let empty = Histogram()
        #expect(empty.isEmpty)
        #expect(empty.totalCount == 0)
        #expect(empty.min == 0 && empty.max == 0 && empty.mean == 0)
        #expect(empty.value(atPercentile: 99) == 0)
        #expect(empty.percentileDistribution().isEmpty)
    }

    @Test("the distribution halves toward 100 and ends at the exact max")
    func distributionHalves() throws {
        let points = Samples.histogram.percentileDistribution()
        #expect(points.count <= 60)
        #expect(points.prefix(4).map(\.percentile) == [0, 50, 75, 87.5])
        #expect(points.first?.value == Samples.histogram.min)
        let last = try #require(points.last)
        #expect(last.percentile == 100 && last.value == Samples.histogram.max)
        #expect(zip(points, points.dropFirst()).allSatisfy { $0.percentile < $1.percentile && $0.value <= $1.value })
        #expect(points.dropLast().allSatisfy { $0.percentile <= 99.9999 })

        var few = Histogram()
        for value in 1...10 { few.record(value * 100) }
        // 93.75 % of 10 samples is already the last one, so the halving stops there.
        #expect(few.percentileDistribution().map(\.percentile) == [0, 50, 75, 87.5, 93.75, 100])
    }

    @Test(
        "malformed input throws an error naming the problem",
        arguments: [
            ("", "empty input"),
            ("not base64!", "not valid base64"),
            (Bytes.base64([2]), "unsupported format version 2"),
            (Bytes.base64([1]), "truncated varint at byte 1"),
            (Bytes.base64([1, 0, 0, 0, 0x80]), "truncated varint at byte 4"),
            (Bytes.base64([1, 0, 0, 0] + Array(repeating: 0xff, count: 10) + [0x01]), "varint overflows 64 bits at byte 4"),
            (Bytes.base64([1, 0, 0, 0, 0]), "zero count at byte 4"),
            (Bytes.base64([1, 0, 0, 0] + Bytes.count(-30_000)), "empty run past the top slot at byte 4"),
            (Bytes.base64([1, 0, 0, 0] + Bytes.count(-27_648) + Bytes.count(1)), "count past the top slot at byte 7"),
            (Bytes.base64([1, 0, 1, 1] + Bytes.count(-1) + Bytes.count(.max) + Bytes.count(.max)), "total count overflows"),
            (Bytes.base64([1, 0, 9, 5]), "out of order"),
            (Bytes.base64([1, 0, 5, 5]), "no counts but min, max or sum is not 0"),
            (Bytes.base64([1, 5, 5, 5] + Bytes.count(-4) + Bytes.count(1)), "min 5 or max 5 does not match the counts"),
            (Bytes.base64([1, 100, 5, 5] + Bytes.count(-5) + Bytes.count(1)), "sum 100 is outside")
        ])
    func malformedInputThrows(input: String, problem: String) {
        let error = #expect(throws: HistogramDecodingError.self) { try Histogram(serialized: input) }
        #expect(error?.description.hasPrefix("histogram: ") == true)
        #expect(error?.description.contains(problem) == true, "\(error?.description ?? "no error")")
    }

    @Test("every truncation of a real encoding throws and random corruption never crashes")
    func damagedInputNeverCrashes() throws {
        var histogram = Histogram()
        // Few samples: the truncation sweep decodes every prefix, which is quadratic in the length.
        for value in Samples.lognormal.prefix(500) { histogram.record(value) }
        let bytes = [UInt8](try #require(Data(base64Encoded: histogram.serialized())))
        for length in 0..<bytes.count {
            #expect(throws: HistogramDecodingError.self) { try Histogram(serialized: Bytes.base64(Array(bytes[..<length]))) }
        }
        var random = SplitMix64(seed: 7)
        for _ in 0..<1_000 {
            var damaged = bytes
            for _ in 0...Int(random.next() % 3) {
                damaged[Int(random.next() % UInt64(damaged.count))] = UInt8(truncatingIfNeeded: random.next())
            }
            // Whatever decodes must be a consistent histogram in its own right.
            if let decoded = try? Histogram(serialized: Bytes.base64(damaged)) {
                #expect(try Histogram(serialized: decoded.serialized()) == decoded)
            }
        }
    }
}

/// One million lognormal latencies (median 20 ms, σ = 1), shared by the tests and built once.
private enum Samples {
    static let lognormal: [Int] = {
        var random = SplitMix64(seed: 0x5EED)
        var samples: [Int] = []
        samples.reserveCapacity(1_000_000)
        while samples.count < 1_000_000 {
            // Box–Muller: two uniforms in (0, 1] make two independent standard normals.
            let u1 = Double((random.next() >> 11) + 1) * 0x1p-53
            let u2 = Double((random.next() >> 11) + 1) * 0x1p-53
            let radius = (-2 * log(u1)).squareRoot()
            samples.append(latency(radius * cos(2 * .pi * u2)))
            samples.append(latency(radius * sin(2 * .pi * u2)))
        }
        return samples
    }()

    static let sorted = lognormal.sorted()

    static let histogram: Histogram = {
        var histogram = Histogram()
        for value in lognormal { histogram.record(value) }
        return histogram
    }()

    static func latency(_ normal: Double) -> Int {
        Swift.max(1, Int((20_000 * exp(normal)).rounded()))
    }

    /// The sample at sorted index rank − 1, with rank = ⌈p/100 · n⌉ (at least 1).
    static func exactPercentile(_ p: Double, of sorted: [Int] = sorted) -> Int {
        // p · n / 100 rather than p / 100 · n: 99.9 / 100 · 1,000,000 rounds to 999,000.0000000001.
        let rank = Swift.max(1, Int((p * Double(sorted.count) / 100).rounded(.up)))
        return sorted[rank - 1]
    }

    static func relativeError(_ measured: Int, _ exact: Int) -> Double {
        Double(Swift.abs(measured - exact)) / Double(exact)
    }
}

/// Hand-built encodings for the malformed-input table.
private enum Bytes {
    static func base64(_ bytes: [UInt8]) -> String { Data(bytes).base64EncodedString() }

    /// One zig-zag LEB128 count, negative for a run of empty slots, as the format writes it.
    static func count(_ value: Int) -> [UInt8] {
        var rest = UInt(bitPattern: (value << 1) ^ (value >> 63))
        var bytes: [UInt8] = []
        while rest >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: rest) | 0x80)
            rest >>= 7
        }
        return bytes + [UInt8(rest)]
    }
}
