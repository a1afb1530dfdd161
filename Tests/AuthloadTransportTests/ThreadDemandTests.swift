import Testing

@testable import AuthloadTransport

@Suite("The loop thread's demand, as the scheduler counts it")
struct ThreadDemandTests {
    @Test(
        "a schedstat line gives its time on a core and its time waiting for one",
        arguments: [
            ("123456789 2000 77\n", 123_456_789, 2_000),
            ("0 0 0\n", 0, 0),
            ("5 6", 5, 6)
        ])
    func parse(line: String, running: Int64, waiting: Int64) throws {
        let parsed = try #require(ThreadDemand.parse(ArraySlice(Array(line.utf8))))
        #expect(parsed.running == running && parsed.waiting == waiting)
    }

    @Test("a line with fewer than two numbers is not read", arguments: ["", "12\n", "abc def"])
    func unreadable(line: String) {
        #expect(ThreadDemand.parse(ArraySlice(Array(line.utf8))) == nil)
    }

    @Test("the calling thread's demand grows while it computes")
    func growsWithWork() throws {
        let demand = ThreadDemand()
        // A kernel without scheduler statistics says nothing, and the loop judges by its waits instead.
        guard let before = demand.read() else { return }
        var x: UInt64 = 1
        for i in 0..<2_000_000 { x = x &* 6_364_136_223_846_793_005 &+ UInt64(i) }
        let after = try #require(demand.read())
        #expect(after > before, "\(x)")
    }
}
