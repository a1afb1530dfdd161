/// A table with a fixed capacity whose entries expire, so a run of any length holds at most `capacity` of them.
///
/// When full, expired entries go first; if none has expired, the table starts over (as the GCCS channel
/// table does): the users whose entries go are told their session expired, which a staging server may do.
struct ExpiringTable<Value: Sendable>: Sendable {
    let capacity: Int
    private(set) var entries: [String: (value: Value, expiresAt: Duration)] = [:]

    init(capacity: Int) { self.capacity = max(1, capacity) }

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
        if entries[key] == nil, entries.count >= capacity {
            entries = entries.filter { now <= $0.value.expiresAt }
            if entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
        }
        entries[key] = (value, expiresAt)
    }

    @discardableResult
    mutating func remove(_ key: String) -> Value? { entries.removeValue(forKey: key)?.value }
}
