import AuthloadCore
import Foundation

/// Paths of the files one report consists of.
public struct ReportFiles: Sendable, Equatable {
    /// The directory the report was written into.
    public var directory: String
    public var html: String
    public var summaryCSV: String
    public var timeseriesCSV: String
    public var errorsCSV: String
    public var resultJSON: String
    public var junitXML: String
    /// Written only for runs with stages.
    public var capacityCSV: String
    /// The time-series rows of a run still going, one JSON object per line, appended at each checkpoint;
    /// gone once a final (or rebuilt) `result.json` holds them.
    public var checkpointRows: String

    /// Every file (the machine-readable result first).
    public var all: [String] { [resultJSON, summaryCSV, timeseriesCSV, errorsCSV, junitXML, html] }

    init(directory: String) {
        func file(_ name: String) -> String { (directory as NSString).appendingPathComponent(name) }
        self.directory = directory
        html = file("report.html")
        summaryCSV = file("summary.csv")
        timeseriesCSV = file("timeseries.csv")
        errorsCSV = file("errors.csv")
        resultJSON = file("result.json")
        junitXML = file("junit.xml")
        capacityCSV = file("capacity.csv")
        checkpointRows = file("checkpoint-timeseries.jsonl")
    }
}

/// Turns a finished run into its report directory, and reads a saved `result.json` back.
///
/// Each file is written to a hidden temporary file in the same directory, flushed to disk and renamed
/// into place, so a reader (a CI job collecting artefacts, a person refreshing the page) sees either the
/// old file or the complete new one, never half of it; a crash leaves at most a stray `.*.tmp-*` file.
///
/// ```swift
/// let files = try ReportWriter.write(result, to: "Reports/staging-nightly-20250101T020000Z")
/// print("report: \(files.html)")
/// let again = try ReportWriter.load(resultJSON: files.resultJSON)   // == result
/// ```
public struct ReportWriter {
    /// The `result.json` schema this build writes and reads.
    public static let schemaVersion = 1

    /// Writes `report.html`, `summary.csv`, `timeseries.csv`, `errors.csv`, `junit.xml`, `result.json` and, for a staged run, `capacity.csv` into
    /// `directory`, creating it if needed and replacing files of an earlier report.
    ///
    /// - Parameter checkpointed: the first interval that checkpoints have not yet saved in `directory`. The rows
    ///   before it come back from the checkpoint rows file at full resolution (the run forgot them once
    ///   saved), so `result.timeseries` needs only the rest; `timeseries.csv` keeps those rows as written and
    ///   gets the rest appended. Nil (or 0) writes `result.timeseries` as it is and rewrites the file.
    ///   - keepingTimeseriesCSV: leave an existing `timeseries.csv` as it is (`authload report`): the run wrote it
    ///     one row per interval, where `result.json` of a long run holds merged rows.
    /// - Throws: ``ReportError`` naming the directory or file that could not be written.
    @discardableResult
    public static func write(
        _ result: RunResult, to directory: String, checkpointed: Int? = nil,
        keepingTimeseriesCSV: Bool = false
    ) throws -> ReportFiles {
        try written(result, to: directory, checkpointed: checkpointed, keepingTimeseriesCSV: keepingTimeseriesCSV).files
    }

    /// ``write(_:to:checkpointed:keepingTimeseriesCSV:)``, returning the result as `result.json` now holds it: with
    /// the rows the checkpoints saved, as ``load(resultJSON:)`` would read it back.
    ///
    /// - Parameters:
    ///   - sideBySide: write the files at once on every core; false writes them one after another (a shard of a
    ///     simulation on threads, whose twin is still running on the other core: it would only hold more memory).
    public static func written(
        _ result: RunResult, to directory: String, checkpointed: Int? = nil,
        keepingTimeseriesCSV: Bool = false, sideBySide: Bool = true
    ) throws -> (files: ReportFiles, result: RunResult) {
        let files = try prepare(directory)
        var result = result
        if let checkpointed, checkpointed > 0 {
            // Read back, not kept while the run saved them: kept, a day-long run's rows grew its memory all day.
            result.timeseries = try timeseries(savedIn: files.checkpointRows, then: result.timeseries)
        }
        let finished = result
        // The files are independent of one another, and a long run's result.json, timeseries.csv and report.html
        // each take a while: written side by side, on as many cores as there are (both are free once a
        // simulation's shards are done). Each file is still replaced atomically.
        let writers: [@Sendable () throws -> Void] = [
            {
                try writeResultJSON(finished, to: files.resultJSON)
                // result.json now holds every row the checkpoints saved on the side.
                try? FileManager.default.removeItem(atPath: files.checkpointRows)
            },
            {
                if !(keepingTimeseriesCSV && FileManager.default.fileExists(atPath: files.timeseriesCSV)) {
                    try writeTimeseries(finished, to: files, from: checkpointed ?? 0)
                }
            },
            { try writeAtomically(HTMLReport.render(finished), to: files.html) },
            {
                try writeAtomically(CSVWriter.summary(finished), to: files.summaryCSV)
                try writeAtomically(CSVWriter.errors(finished), to: files.errorsCSV)
                try writeAtomically(JUnitWriter.render(finished), to: files.junitXML)
                if let capacity = CSVWriter.capacity(finished) {
                    try writeAtomically(capacity, to: files.capacityCSV)
                } else if FileManager.default.fileExists(atPath: files.capacityCSV) {
                    // A rebuilt report of a run without stages must not keep an earlier run's capacity table.
                    try? FileManager.default.removeItem(atPath: files.capacityCSV)
                }
            }
        ]
        if sideBySide {
            try inParallel(writers)
        } else {
            for write in writers { try write() }
        }
        return (files, result)
    }

    /// Runs every one of `bodies`, side by side, and throws the error of the first (in order) that threw.
    static func inParallel(_ bodies: [@Sendable () throws -> Void]) throws {
        let errors = Locked([(any Error)?](repeating: nil, count: bodies.count))
        DispatchQueue.concurrentPerform(iterations: bodies.count) { position in
            do { try bodies[position]() } catch { errors.withLock { $0[position] = error } }
        }
        if let error = errors.withLock({ $0 }).lazy.compactMap({ $0 }).first { throw error }
    }

    /// Writes `timeseries.csv` whole (`from` 0, or no file yet), or appends the intervals numbered `from` on.
    static func writeTimeseries(_ result: RunResult, to files: ReportFiles, from first: Int) throws {
        do {
            if first == 0 || !FileManager.default.fileExists(atPath: files.timeseriesCSV) {
                try writeAtomically(CSVWriter.timeseries(result), to: files.timeseriesCSV)
            } else if case var rows = CSVWriter.timeseries(result, from: first, header: false), !rows.isEmpty {
                try rows.withUTF8 { try append(UnsafeRawBufferPointer($0), to: files.timeseriesCSV) }
            }
        } catch let error as ReportError {
            throw error
        } catch {
            throw ReportError.unwritable(files.timeseriesCSV, reason(error))
        }
    }

    /// Appends `data` to the file at `path`, creating it if needed.
    static func append(_ data: some DataProtocol, to path: String) throws {
        if !FileManager.default.fileExists(atPath: path) {
            guard FileManager.default.createFile(atPath: path, contents: nil) else {
                throw ReportError.unwritable(path, "cannot create the file")
            }
        }
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        defer { try? handle.close() }
        try handle.seekToEnd()
        try handle.write(contentsOf: data)
    }

    /// Creates `directory` if needed and names the report's files in it.
    static func prepare(_ directory: String) throws -> ReportFiles {
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw ReportError.unwritable(directory, reason(error))
        }
        return ReportFiles(directory: directory)
    }

    /// Reads a `result.json` written by ``write(_:to:)``, or by a checkpoint (with the rows it saved beside it).
    ///
    /// - Throws: ``ReportError`` naming `path` and the problem: unreadable file, invalid JSON (with line
    ///   and column where Foundation gives them), a missing or mistyped field (as a path such as
    ///   `metrics[2].count`), or a schema version this build does not know.
    public static func load(resultJSON path: String) throws -> RunResult {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw ReportError.unreadable(path, "no such file")
        }
        guard !isDirectory.boolValue else { throw ReportError.unreadable(path, "is a directory") }
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw ReportError.unreadable(path, reason(error))
        }
        let decoder = JSONDecoder()
        decoder.nonConformingFloatDecodingStrategy = nonConformingFloats.decoding
        // Look at the version on its own first, so a newer file says "newer", not "missing field x".
        struct Version: Decodable { var schemaVersion: Int? }
        do {
            // Parsed once by authload's own parser where it can; JSONDecoder reads what it cannot, and says why not.
            let parsed = try? JSONValue.parse(data)
            let version = try parsed.map { $0["schemaVersion"]?.intValue } ?? decoder.decode(Version.self, from: data).schemaVersion
            if let found = version, found != schemaVersion {
                throw ReportError.unsupportedSchema(path, found: found, supported: schemaVersion)
            }
            var result = try parsed.flatMap { decodeRowsApart($0, decoder: decoder) } ?? decoder.decode(RunResult.self, from: data)
            if result.status == .running {
                // A killed run: its rows are in the checkpoint file, merged past two hours as they are read, so a
                // day-long soak is rebuilt in the same memory as a short one.
                let directory = (path as NSString).deletingLastPathComponent
                result.timeseries = try timeseries(savedIn: ReportFiles(directory: directory).checkpointRows, then: result.timeseries)
            }
            return result
        } catch let error as ReportError {
            throw error
        } catch let error as DecodingError {
            throw describe(error, path: path, data: data)
        } catch {
            throw ReportError.invalidJSON(path, reason(error))
        }
    }

    /// A result whose time series authload's own parser reads (``IntervalRow/init(json:)``) and the rest
    /// `JSONDecoder`: a long run's rows are most of the file and read several times faster so. Nil when the file is
    /// not as authload writes it; the caller's `JSONDecoder` then says what is wrong.
    static func decodeRowsApart(_ parsed: JSONValue, decoder: JSONDecoder) -> RunResult? {
        guard case .object(let object) = parsed, let list = object["timeseries"]?.arrayValue else { return nil }
        var rows: [IntervalRow] = []
        rows.reserveCapacity(list.count)
        for element in list {
            guard let row = IntervalRow(json: element) else { return nil }
            rows.append(row)
        }
        let rest = JSONObject(object.map { ($0.key, $0.key == "timeseries" ? JSONValue.array([]) : $0.value) })
        guard var result = try? decoder.decode(RunResult.self, from: Data(JSONValue.object(rest).serialized())) else { return nil }
        result.timeseries = rows
        return result
    }

    // MARK: Helpers

    /// NaN and infinity are not JSON; spelled as strings they keep one odd figure from losing the whole report.
    static let nonConformingFloats = (
        encoding: JSONEncoder.NonConformingFloatEncodingStrategy.convertToString(
            positiveInfinity: "Infinity", negativeInfinity: "-Infinity", nan: "NaN"),
        decoding: JSONDecoder.NonConformingFloatDecodingStrategy.convertFromString(
            positiveInfinity: "Infinity", negativeInfinity: "-Infinity", nan: "NaN")
    )

    static func encode(_ result: RunResult, path: String) throws -> Data {
        let encoder = JSONEncoder()
        // Sorted keys make two results diff cleanly; pretty printing makes them readable in a code review.
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.nonConformingFloatEncodingStrategy = nonConformingFloats.encoding
        do {
            var data = try encoder.encode(result)
            data.append(UInt8(ascii: "\n"))
            return data
        } catch {
            throw ReportError.unwritable(path, "cannot encode the result: \(reason(error))")
        }
    }

    /// Writes `data` to a temporary sibling of `path`, flushes it and renames it over `path`.
    static func writeAtomically(_ data: Data, to path: String) throws {
        try writeAtomically(to: path) { try $0.write(contentsOf: data) }
    }

    /// Writes `text` as UTF-8, atomically, without copying it into a `Data` first.
    static func writeAtomically(_ text: String, to path: String) throws {
        var text = text
        try text.withUTF8 { bytes in try writeAtomically(to: path) { try $0.write(contentsOf: UnsafeRawBufferPointer(bytes)) } }
    }

    static func describe(_ error: DecodingError, path: String, data: Data) -> ReportError {
        func field(_ codingPath: [any CodingKey]) -> String {
            var out = ""
            for key in codingPath {
                if let index = key.intValue {
                    out += "[\(index)]"
                } else {
                    out += (out.isEmpty ? "" : ".") + key.stringValue
                }
            }
            return out
        }
        switch error {
        case .keyNotFound(let key, let context):
            return .unexpectedContent(path, "missing field \"\(field(context.codingPath + [key]))\"")
        case .typeMismatch(let type, let context):
            return .unexpectedContent(path, "field \"\(field(context.codingPath))\": expected \(type)")
        case .valueNotFound(let type, let context):
            return .unexpectedContent(path, "field \"\(field(context.codingPath))\": expected \(type), found null")
        case .dataCorrupted(let context) where context.codingPath.isEmpty:
            return .invalidJSON(path, syntaxProblem(in: data) ?? context.debugDescription)
        case .dataCorrupted(let context):
            return .unexpectedContent(path, "field \"\(field(context.codingPath))\": \(context.debugDescription)")
        @unknown default:
            return .unexpectedContent(path, reason(error))
        }
    }

    /// Where and why `data` is not JSON, which `JSONDecoder` does not say on Linux but `JSONSerialization` does.
    ///
    /// Its "around character N" (a 0-based byte offset) becomes a line and column, which is what an editor shows.
    private static func syntaxProblem(in data: Data) -> String? {
        do {
            _ = try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
            return nil
        } catch {
            guard let text = (error as NSError).userInfo[NSDebugDescriptionErrorKey] as? String else { return nil }
            guard let range = text.range(of: #"around character \d+"#, options: .regularExpression),
                let offset = Int(text[range].split(separator: " ").last ?? ""), offset <= data.count
            else { return text }
            let before = data.prefix(offset)
            let line = before.reduce(1) { $1 == UInt8(ascii: "\n") ? $0 + 1 : $0 }
            let column = offset - (before.lastIndex(of: UInt8(ascii: "\n")).map { $0 + 1 } ?? 0) + 1
            return text.replacingCharacters(in: range, with: "around line \(line), column \(column)")
        }
    }

    /// The most specific human sentence an error offers.
    static func reason(_ error: any Error) -> String {
        if let error = error as? ReportError { return error.message }
        let ns = error as NSError
        if let underlying = ns.userInfo[NSUnderlyingErrorKey] as? NSError,
            let text = underlying.userInfo[NSDebugDescriptionErrorKey] as? String
        {
            return text
        }
        if let text = ns.userInfo[NSDebugDescriptionErrorKey] as? String { return text }
        return ns.localizedDescription
    }
}
