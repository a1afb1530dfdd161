/// The table of RFC 7541 §2.3.2 that both ends grow as header blocks pass, evicting the oldest entries.
///
/// The encoder and the decoder each keep one, and they stay equal only if both apply the same
/// insertions, evictions and size updates in the same order, which is why this one type serves both.
struct HPACKDynamicTable: Sendable {
    /// Entries oldest first; index 1 of the table is the last element.
    private(set) var entries: [(name: String, value: String)] = []
    /// Sum of the entries' sizes (octets plus 32 each).
    private(set) var size = 0
    /// Largest size allowed now, as the latest size update set it.
    private(set) var maxSize: Int

    init(maxSize: Int) { self.maxSize = maxSize }

    var count: Int { entries.count }

    /// The entry at `index` counted from 1 = newest.
    subscript(index: Int) -> (name: String, value: String)? {
        guard index >= 1, index <= entries.count else { return nil }
        return entries[entries.count - index]
    }

    /// Adds an entry as newest, evicting the oldest until it fits; an entry larger than the table empties it.
    mutating func insert(name: String, value: String) {
        let entrySize = name.utf8.count + value.utf8.count + 32
        evict(toFit: maxSize - entrySize)
        guard entrySize <= maxSize else { return }
        entries.append((name, value))
        size += entrySize
    }

    /// Changes the maximum size, evicting what no longer fits.
    mutating func setMaxSize(_ newMax: Int) {
        maxSize = newMax
        evict(toFit: newMax)
    }

    /// The index (1 = newest) of an exact match and of the newest entry with this name.
    func find(name: String, value: String) -> (field: Int?, name: Int?) {
        var nameMatch: Int?
        for position in stride(from: entries.count - 1, through: 0, by: -1) where entries[position].name == name {
            let index = entries.count - position
            if entries[position].value == value { return (index, nameMatch ?? index) }
            if nameMatch == nil { nameMatch = index }
        }
        return (nil, nameMatch)
    }

    private mutating func evict(toFit limit: Int) {
        var dropped = 0
        while size > max(limit, 0) && dropped < entries.count {
            size -= entries[dropped].name.utf8.count + entries[dropped].value.utf8.count + 32
            dropped += 1
        }
        if dropped > 0 { entries.removeFirst(dropped) }
    }
}
