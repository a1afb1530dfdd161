import AuthloadCore
import Testing

@testable import AuthloadStaging

@Suite("Staging tables whose entries expire")
struct ExpiringTableTests {
    @Test("expired entries are swept out as new ones come, long before the table is full")
    func sweepsExpiredEntries() {
        var table = ExpiringTable<Int>(capacity: 1_000_000)
        // A soak: each second 100 tokens that live 30 s, for an hour: 360,000 issued, about 3,000 alive at once.
        var largest = 0
        for second in 0..<3_600 {
            let now = Duration.seconds(second)
            for n in 0..<100 { table.set("t-\(second)-\(n)", n, expiresAt: now + .seconds(30), now: now) }
            largest = max(largest, table.count)
        }
        #expect(largest <= 2 * 3_100, "at most about twice the live entries: \(largest)")
        #expect(table.value("t-3599-7", now: .seconds(3_600)) == 7, "live entries survive the sweeps")
        #expect(table.value("t-3500-7", now: .seconds(3_600)) == nil, "expired entries read as nil")
    }

    @Test("a sweep removes exactly the expired entries: the table holds what a model of it holds, entry for entry")
    func sweepMatchesModel() {
        var table = ExpiringTable<Int>(capacity: 5_000)
        var model: [String: (value: Int, expiresAt: Duration)] = [:]
        var sweepAt = 1_024
        var random = SplitMix64(seed: 3)
        for step in 0..<20_000 {
            let now = Duration.milliseconds(step * 10)
            let key = "k\(Int.random(in: 0..<30_000, using: &random))"
            let expiresAt = now + .milliseconds(Int.random(in: 1...8_000, using: &random))
            if model[key] == nil, model.count >= sweepAt {
                model = model.filter { now <= $0.value.expiresAt }
                if model.count >= 5_000 { model.removeAll() }
                sweepAt = min(5_000, max(1_024, model.count * 2))
            }
            model[key] = (step, expiresAt)
            table.set(key, step, expiresAt: expiresAt, now: now)
            #expect(table.count == model.count)
        }
        #expect(Set(table.entries.keys) == Set(model.keys))
        #expect(table.entries.allSatisfy { model[$0.key]?.value == $0.value.value })
    }

    @Test("a table full of live entries starts over rather than grow past its capacity")
    func fullOfLiveEntriesStartsOver() {
        var table = ExpiringTable<Int>(capacity: 3)
        for n in 0..<3 { table.set("k\(n)", n, expiresAt: .seconds(60), now: .zero) }
        #expect(table.count == 3)
        table.set("k3", 3, expiresAt: .seconds(60), now: .zero)
        #expect(table.count == 1)
        #expect(table.value("k3", now: .seconds(1)) == 3 && table.value("k0", now: .seconds(1)) == nil)
        // Replacing an entry that is there never sweeps.
        table.set("k3", 4, expiresAt: .seconds(60), now: .zero)
        #expect(table.value("k3", now: .seconds(1)) == 4)
    }
}
