import AuthloadCore
import Foundation

/// `result.json` written a time-series row at a time.
///
/// A day-long soak keeps up to ``TimeSeries/defaultMaxRows`` rows, tens of megabytes of JSON; `JSONEncoder` holds
/// the whole document as a tree of values and then as text before a byte reaches the disk, and the final report
/// of a 24-hour simulation took 705 MB of RSS (400 more than the run) doing so. Encoding the result without its
/// rows, then each row on its own into the gap where they belong, writes the same bytes with one row in memory.
extension ReportWriter {
    /// Writes `result` to `path` (atomically) as ``encode(_:path:)`` would, one row of its time series at a time.
    static func writeResultJSON(_ result: RunResult, to path: String) throws {
        var shell = result
        shell.timeseries = []
        let outline = try encode(shell, path: path)
        // Pretty printing puts the top-level keys two spaces in; only the run's own series sits there.
        guard !result.timeseries.isEmpty, let key = outline.range(of: Data("\n  \"timeseries\" : [".utf8)),
            let close = outline[key.upperBound...].firstIndex(of: UInt8(ascii: "]"))
        else { return try writeAtomically(try encode(result, path: path), to: path) }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.nonConformingFloatEncodingStrategy = nonConformingFloats.encoding
        let indent = Array("    ".utf8)
        try writeAtomically(to: path) { handle in
            try handle.write(contentsOf: outline[..<key.upperBound])
            // Bytes, not `Data`: a `Data` appended to byte by byte went through `replaceSubrange` at every byte, and
            // that was half of writing a simulated day's report (a shard's 70 MB, then the merged one).
            var chunk: [UInt8] = []
            chunk.reserveCapacity(1 << 20 + 1 << 16)
            for (number, row) in result.timeseries.enumerated() {
                if number > 0 { chunk.append(UInt8(ascii: ",")) }
                chunk.append(UInt8(ascii: "\n"))
                chunk.append(contentsOf: indent)
                if RowJSON.append(row, pretty: true, depth: 2, to: &chunk) {
                    try flush(&chunk, to: handle)
                    continue
                }
                let encoded: Data
                do {
                    encoded = try encoder.encode(row)
                } catch {
                    throw ReportError.unwritable(path, "cannot encode the result: \(reason(error))")
                }
                // Rows are elements of the top-level array: four spaces in, but not the blank line inside an empty
                // array. A JSON string holds no raw newline.
                encoded.withUnsafeBytes { row in
                    var start = row.startIndex
                    while let newline = row[start...].firstIndex(of: UInt8(ascii: "\n")) {
                        chunk.append(contentsOf: row[start...newline])
                        start = newline + 1
                        if start < row.endIndex, row[start] != UInt8(ascii: "\n") { chunk.append(contentsOf: indent) }
                    }
                    chunk.append(contentsOf: row[start...])
                }
                try flush(&chunk, to: handle)
            }
            chunk.append(contentsOf: "\n  ".utf8)
            try handle.write(contentsOf: chunk)
            try handle.write(contentsOf: outline[close...])
        }
    }

    /// Writes `chunk` out once it holds a megabyte, and empties it.
    private static func flush(_ chunk: inout [UInt8], to handle: FileHandle) throws {
        guard chunk.count >= 1 << 20 else { return }
        try handle.write(contentsOf: chunk)
        chunk.removeAll(keepingCapacity: true)
    }

    /// Writes what `body` writes to a temporary sibling of `path`, flushes it and renames it over `path`.
    static func writeAtomically(to path: String, _ body: (FileHandle) throws -> Void) throws {
        let url = URL(fileURLWithPath: path)
        // Same directory, so the rename cannot cross file systems and stays atomic.
        let temp = url.deletingLastPathComponent().appendingPathComponent(".\(url.lastPathComponent).tmp-\(UUID().uuidString)")
        let descriptor = open(temp.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw ReportError.unwritable(path, String(cString: strerror(errno))) }
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        do {
            try body(handle)
            // Without the flush a power cut after the rename can leave an empty file under the final name.
            try handle.synchronize()
            try handle.close()
            guard rename(temp.path, path) == 0 else {
                throw ReportError.unwritable(path, String(cString: strerror(errno)))
            }
        } catch {
            try? handle.close()
            try? FileManager.default.removeItem(at: temp)
            throw error as? ReportError ?? ReportError.unwritable(path, reason(error))
        }
    }
}
