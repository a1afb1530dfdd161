/// A run's time series in a fixed amount of memory, however long the run.
///
/// Past `maxRows` rows, adjacent rows of the older half are merged (``IntervalRow/merged(with:)``): older
/// time is kept at coarser and coarser resolution, the recent past at full resolution, and every interval
/// and sample stays counted. The collector keeps a run's rows in one; a report reading back the rows its
/// checkpoints saved keeps them in another, so the end of a day-long soak never holds every second at once.
public struct TimeSeries: Sendable {
    /// Two hours of 1 s intervals at full resolution: about 18 MB of rows with 28 series each.
    public static let defaultMaxRows = 7_200

    public let maxRows: Int
    /// In index order; each row starts where the one before it ends.
    public private(set) var rows: [IntervalRow] = []

    public init(maxRows: Int = defaultMaxRows) {
        self.maxRows = max(4, maxRows)
    }

    /// Adds the rows after those kept, merging older ones if that leaves more than `maxRows`.
    public mutating func append<Rows: Sequence<IntervalRow>>(contentsOf new: Rows) {
        rows.append(contentsOf: new)
        if rows.count > maxRows { Self.compact(&rows, maxRows: maxRows) }
    }

    public mutating func append(_ row: IntervalRow) {
        append(contentsOf: CollectionOfOne(row))
    }

    /// Drops the rows that end before interval `index`: a checkpoint has saved them to disk.
    public mutating func removeRows(before index: Int) {
        rows.removeAll { $0.end <= index }
    }

    /// Keeps at most `maxRows` rows: merges adjacent rows of equal span, oldest first, in all but the newest
    /// half. When no two old neighbours have the same span, the pair with the smallest combined span is merged.
    private static func compact(_ rows: inout [IntervalRow], maxRows: Int) {
        let recent = maxRows / 2
        while rows.count > maxRows {
            let old = rows.count - recent
            var merged: [IntervalRow] = []
            merged.reserveCapacity(old)
            var index = 0
            while index < old {
                if index + 1 < old, rows[index].intervals == rows[index + 1].intervals {
                    merged.append(rows[index].merged(with: rows[index + 1]))
                    index += 2
                } else {
                    merged.append(rows[index])
                    index += 1
                }
            }
            if merged.count == old, old > 1 {
                let pair = (0..<(old - 1)).min {
                    merged[$0].intervals + merged[$0 + 1].intervals < merged[$1].intervals + merged[$1 + 1].intervals
                }!
                merged.replaceSubrange(pair...(pair + 1), with: [merged[pair].merged(with: merged[pair + 1])])
            }
            guard merged.count < old else { return }
            rows.replaceSubrange(0..<old, with: merged)
        }
    }
}
