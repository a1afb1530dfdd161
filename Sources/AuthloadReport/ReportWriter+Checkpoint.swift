import AuthloadCore
import Foundation

/// Checkpoints: what a run still going saves, at a cost that does not grow with its length.
///
/// `result.json` is rewritten with the cumulative figures only (fixed in size: histograms, errors,
/// thresholds); the time series, which grows with the run, is only ever appended to, both to
/// `timeseries.csv` and, as JSON lines that keep every field, to `checkpoint-timeseries.jsonl`.
/// Rewriting a whole time series every 10 s cost a soak more CPU and memory each time: the encoder's
/// transient copies of a 30-minute series reached tens of megabytes, and the heap kept their high-water mark.
extension ReportWriter {
    /// Saves a checkpoint of a run still going: appends the rows of `result.timeseries` numbered
    /// `firstNewInterval` on to `timeseries.csv` (writing its header first when `firstNewInterval` is 0) and to
    /// the checkpoint rows file, then rewrites `result.json` atomically without the time series.
    ///
    /// After a `kill -9`, ``load(resultJSON:)`` puts the rows back and ``write(_:to:checkpointed:)``
    /// (`authload report DIR`) rebuilds the rest; the run's own final report replaces every file when it ends.
    ///
    /// - Parameter result: the run so far; its time series needs only the rows not yet saved.
    /// - Returns: the number of the first interval not yet saved: the next checkpoint's `firstNewInterval`.
    public static func writeCheckpoint(_ result: RunResult, to directory: String, firstNewInterval: Int) throws -> Int {
        let files = try prepare(directory)
        var saved = result
        saved.timeseries = result.timeseries.filter { $0.index >= firstNewInterval }
        // Rows first: a crash between the two leaves rows that result.json's figures do not cover yet, never a gap.
        if firstNewInterval == 0 { try? FileManager.default.removeItem(atPath: files.checkpointRows) }
        try appendRows(saved.timeseries, to: files.checkpointRows)
        try writeTimeseries(saved, to: files, from: firstNewInterval)
        let next = saved.timeseries.last?.end ?? firstNewInterval
        saved.timeseries = []
        try writeAtomically(try encode(saved, path: files.resultJSON), to: files.resultJSON)
        return next
    }

    /// A run's whole time series when its checkpoints saved the earlier rows in `path`: those rows, then the
    /// rows of `kept` after them, merged past ``TimeSeries/defaultMaxRows`` as they are read, so a day-long
    /// soak's rows never sit in memory all at once. Without the file, `kept` as it is.
    static func timeseries(savedIn path: String, then kept: [IntervalRow]) throws -> [IntervalRow] {
        var series = TimeSeries()
        try forEachCheckpointedRow(in: path, after: -1) { series.append($0) }
        let end = series.rows.last?.end ?? 0
        series.append(contentsOf: kept.lazy.filter { $0.index >= end })
        return series.rows
    }

    /// Reads the rows a checkpoint saved in `path` after interval `last`, in order and each once, line by line;
    /// nothing when there is no such file.
    ///
    /// A last line without its newline was cut short by the crash the rows are read after, and is left out.
    static func forEachCheckpointedRow(in path: String, after last: Int, _ body: (IntervalRow) -> Void) throws {
        guard let handle = FileHandle(forReadingAtPath: path) else { return }
        defer { try? handle.close() }
        let decoder = JSONDecoder()
        decoder.nonConformingFloatDecodingStrategy = nonConformingFloats.decoding
        var lastIndex = last
        var lineNumber = 0
        var pending = Data()
        while true {
            let chunk: Data
            do {
                guard let read = try handle.read(upToCount: 1 << 16), !read.isEmpty else { break }
                chunk = read
            } catch {
                throw ReportError.unreadable(path, reason(error))
            }
            pending.append(chunk)
            var start = pending.startIndex
            while let newline = pending[start...].firstIndex(of: UInt8(ascii: "\n")) {
                let line = Data(pending[start..<newline])
                start = newline + 1
                lineNumber += 1
                guard !line.isEmpty else { continue }
                let row: IntervalRow
                // authload's own parser reads a line as it was written several times faster; JSONDecoder reads the
                // rest, and says what is wrong with a line neither reads.
                if let parsed = try? JSONValue.parse(line), let read = IntervalRow(json: parsed) {
                    row = read
                } else {
                    do {
                        row = try decoder.decode(IntervalRow.self, from: line)
                    } catch {
                        let why = (error as? DecodingError).map { describe($0, path: path, data: line).message } ?? reason(error)
                        throw ReportError.unexpectedContent(path, "line \(lineNumber): not a time-series row: \(why)")
                    }
                }
                // A checkpoint that failed after appending its rows appends them again at the next one.
                if row.index > lastIndex {
                    lastIndex = row.index
                    body(row)
                }
            }
            // What is left is the start of a line the next chunk ends, or the cut-short last line.
            pending = Data(pending[start...])
        }
    }

    private static func appendRows(_ rows: [IntervalRow], to path: String) throws {
        guard !rows.isEmpty else { return }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.nonConformingFloatEncodingStrategy = nonConformingFloats.encoding
        var lines: [UInt8] = []
        do {
            for row in rows {
                if !RowJSON.append(row, pretty: false, depth: 0, to: &lines) { lines.append(contentsOf: try encoder.encode(row)) }
                lines.append(UInt8(ascii: "\n"))
            }
            try append(Data(lines), to: path)
        } catch let error as ReportError {
            throw error
        } catch {
            throw ReportError.unwritable(path, reason(error))
        }
    }
}

extension RunResult {
    /// The note a report rebuilt from a checkpoint carries first, naming when that checkpoint was saved.
    public static func checkpointNote(savedAt: String) -> String {
        "Rebuilt from the last checkpoint, saved at \(savedAt): the run ended without its final report (killed or "
            + "crashed), so its figures stop there."
    }

    /// A checkpoint read back after its run ended without a final report (``RunStatus/running`` on disk), as the
    /// run it was: ``RunStatus/interrupted``, its first note naming the last checkpoint's time (`endedAt`). The
    /// header, `junit.xml` and the exit status then all say the same (a report of a killed run said `running`,
    /// and its JUnit suite `run running`). Any other result comes back as it is.
    public func interruptedAtLastCheckpoint() -> RunResult {
        guard status == .running else { return self }
        var result = self
        result.status = .interrupted
        result.notes.insert(Self.checkpointNote(savedAt: endedAt), at: 0)
        return result
    }
}
