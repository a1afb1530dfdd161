import AuthloadWire
import Testing

@Suite("HTTP and ISO 8601 dates")
struct HTTPDateTests {
    @Test(
        "formats and reads the RFC 9110 example, and round-trips across leap years and the epoch",
        arguments: [
            (Int64(784_111_777), "Sun, 06 Nov 1994 08:49:37 GMT"),
            (0, "Thu, 01 Jan 1970 00:00:00 GMT"),
            (951_782_400, "Tue, 29 Feb 2000 00:00:00 GMT"),
            (1_800_000_000, "Fri, 15 Jan 2027 08:00:00 GMT"),
            (-1, "Wed, 31 Dec 1969 23:59:59 GMT")
        ])
    func imfFixdate(seconds: Int64, text: String) {
        #expect(HTTPDate.format(epochSeconds: seconds) == text)
        #expect(HTTPDate.parse(text) == seconds)
    }

    @Test(
        "rejects what is not an IMF-fixdate",
        arguments: [
            "", "Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994",
            "Sun, 06 Nov 1994 08:49:37 UTC", "Sun, 32 Nov 1994 08:49:37 GMT", "Sun, 06 Nov 1994 25:00:00 GMT"
        ])
    func rejects(text: String) {
        #expect(HTTPDate.parse(text) == nil)
    }

    @Test("writes IDX expiresAt with milliseconds and Z")
    func iso8601() {
        #expect(HTTPDate.iso8601(epochMilliseconds: 0) == "1970-01-01T00:00:00.000Z")
        #expect(HTTPDate.iso8601(epochMilliseconds: 1_800_000_600_042) == "2027-01-15T08:10:00.042Z")
    }
}
