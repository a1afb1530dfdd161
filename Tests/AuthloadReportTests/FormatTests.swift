import Testing

@testable import AuthloadReport

@Suite("Number formatting")
struct FormatTests {
    @Test(
        "CSV milliseconds have exactly three decimals",
        arguments: [
            (0, "0.000"), (5, "0.005"), (1_234, "1.234"), (1_000_000, "1000.000"), (-1_500, "-1.500")
        ])
    func millis(micros: Int, expected: String) {
        #expect(Format.millis(micros: micros) == expected)
    }

    @Test(
        "fixed decimals round half away from zero and never print -0 or nan",
        arguments: [
            (1.0005, 3, "1.001"), (-0.0001, 3, "0.000"), (2.5, 0, "3"), (0.1 + 0.2, 6, "0.300000"),
            (Double.nan, 3, ""), (Double.infinity, 1, "")
        ])
    func fixed(value: Double, decimals: Int, expected: String) {
        #expect(Format.fixed(value, decimals: decimals) == expected)
    }

    @Test(
        "human numbers group thousands and keep about three significant digits",
        arguments: [
            (0.0, "0"), (0.4567, "0.457"), (1.234, "1.23"), (12.34, "12.3"), (123.4, "123"), (12_345.6, "12,346"),
            (1_234_567, "1,234,567"), (Double.nan, "–")
        ])
    func significant(value: Double, expected: String) {
        #expect(Format.significant(value) == expected)
    }

    @Test("counts, latencies, percentages and durations read naturally")
    func human() {
        #expect(Format.count(12_345) == "12,345")
        #expect(Format.count(-1_000) == "-1,000")
        #expect(Format.ms(micros: 1_234) == "1.23")
        #expect(Format.latency(micros: 1_234) == "1.23 ms")
        #expect(Format.latency(micros: 12_300_000) == "12.3 s")
        #expect(Format.percent(0) == "0 %")
        #expect(Format.percent(0.0123) == "1.23 %")
        #expect(Format.percent(0.0005) == "0.05 %")
        #expect(Format.percent(0.000_000_1) == "< 0.001 %")
        #expect(Format.percent(1) == "100 %")
        #expect(Format.duration(seconds: 0.85) == "850 ms")
        #expect(Format.duration(seconds: 42.5) == "42.5 s")
        #expect(Format.duration(seconds: 725) == "12 min 05 s")
        #expect(Format.duration(seconds: 3 * 3600 + 125) == "3 h 02 min")
    }

    @Test("HTML escaping covers the five special characters")
    func html() {
        #expect(
            Format.html(#"<a href="x">Tom & 'Jerry'</a>"#)
                == "&lt;a href=&quot;x&quot;&gt;Tom &amp; &#39;Jerry&#39;&lt;/a&gt;")
    }
}
