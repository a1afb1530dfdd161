/// A table with a fixed capacity whose entries expire, so a run of any length holds at most `capacity` of them.
///
/// Expired entries are swept out whenever the table has doubled since the last sweep, so it holds about
/// twice the live entries at most, at a constant cost per entry: a staging server that lives through a
/// day-long soak (`authload serve`) does not keep every token it ever issued until the table is full.
/// When full of live entries, the table starts over (as the GCCS channel table does): the users whose
/// entries go are told their session expired, which a staging server may do.
struct ExpiringTable<Value: Sendable>: Sendable {
    let capacity: Int
    private(set) var entries: [String: (value: Value, expiresAt: Duration)] = [:]
    /// The size at which the next insert sweeps out expired entries.
    private var sweepAt: Int
    private static var smallestSweep: Int { 1_024 }

    init(capacity: Int) {
        self.capacity = max(1, capacity)
        sweepAt = min(self.capacity, Self.smallestSweep)
    }

    var count: Int { entries.count }

    /// The live value for `key`; an expired one is removed and reads as nil.
    mutating func value(_ key: String, now: Duration) -> Value? {
        guard let entry = entries[key] else { return nil }
        guard now <= entry.expiresAt else {
            entries[key] = nil
            return nil
        }
        return entry.value
    }

    mutating func set(_ key: String, _ value: Value, expiresAt: Duration, now: Duration) {
        // The size first: below it, which is nearly always, the key is hashed once, by the insert.
        if entries.count >= sweepAt, entries[key] == nil { sweep(now: now) }
        entries[key] = (value, expiresAt)
    }

    /// Removes the expired entries, or every entry when the live ones fill the table.
    ///
    /// In place: a filtered copy hashed every live key again into a table of their size, which then grew back by
    /// doubling, hashing them once more; removing the expired ones keeps the table's storage, hashing each of them
    /// once. Okta's interaction handles are never removed, only swept, and the copy was 2 % of an Okta soak's CPU.
    private mutating func sweep(now: Duration) {
        var expired: [String] = []
        for index in entries.indices where now > entries.values[index].expiresAt {
            expired.append(entries.keys[index])
        }
        if entries.count - expired.count >= capacity {
            entries.removeAll(keepingCapacity: true)
        } else {
            for key in expired { entries.removeValue(forKey: key) }
        }
        sweepAt = min(capacity, max(Self.smallestSweep, entries.count * 2))
    }

    @discardableResult
    mutating func remove(_ key: String) -> Value? { entries.removeValue(forKey: key)?.value }
}
