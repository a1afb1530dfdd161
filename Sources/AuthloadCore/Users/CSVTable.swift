/// A CSV file's header and rows (RFC 4180: quoted fields may hold commas, quotes and line breaks).
///
/// Parsing is strict so a broken file is found before a run, not halfway through it: every row must
/// have as many fields as the header, and each error names the line it is on.
public struct CSVTable: Sendable, Equatable {
    public var header: [String]
    public var rows: [[String]]

    public init(header: [String], rows: [[String]]) {
        self.header = header
        self.rows = rows
    }

    /// Parses `text`; `fileName` prefixes every error (`users.csv: line 7: …`).
    public static func parse(_ text: String, fileName: String) throws(ProfileError) -> CSVTable {
        var records: [(line: Int, fields: [String])] = []
        var fields: [String] = []
        var field = ""
        var line = 1
        var recordLine = 1
        var quoted = false
        var afterQuote = false
        var chars = text.unicodeScalars.makeIterator()
        var pending: Unicode.Scalar? = nil

        func next() -> Unicode.Scalar? {
            if let p = pending {
                pending = nil
                return p
            }
            return chars.next()
        }
        func endRecord() {
            fields.append(field)
            field = ""
            // A blank line (one empty field) is not a record.
            if !(fields.count == 1 && fields[0].isEmpty) { records.append((recordLine, fields)) }
            fields = []
        }

        while let c = next() {
            if quoted {
                if c == "\"" {
                    if let following = next() {
                        if following == "\"" {
                            field.unicodeScalars.append("\"")
                            continue
                        }
                        pending = following
                    }
                    quoted = false
                    afterQuote = true
                } else {
                    if c == "\n" { line += 1 }
                    field.unicodeScalars.append(c)
                }
                continue
            }
            switch c {
            case ",":
                fields.append(field)
                field = ""
                afterQuote = false
            case "\r":
                continue
            case "\n":
                endRecord()
                afterQuote = false
                line += 1
                recordLine = line
            case "\"":
                guard field.isEmpty, !afterQuote else {
                    throw ProfileError(
                        fileName, "line \(line): a quote inside an unquoted field (quote the whole field and double inner quotes)")
                }
                quoted = true
            default:
                guard !afterQuote else {
                    throw ProfileError(fileName, "line \(line): text after a closing quote")
                }
                field.unicodeScalars.append(c)
            }
        }
        if quoted { throw ProfileError(fileName, "line \(recordLine): a quoted field is never closed") }
        if !field.isEmpty || !fields.isEmpty { endRecord() }

        guard let head = records.first else { throw ProfileError(fileName, "is empty: it needs a header row naming the columns") }
        let header = head.fields.map { $0.trimmingCharacters(in: " \t") }
        for (index, name) in header.enumerated() {
            guard !name.isEmpty else { throw ProfileError(fileName, "line \(head.line): column \(index + 1) of the header has no name") }
            guard header.firstIndex(of: name) == index else {
                throw ProfileError(fileName, "line \(head.line): column \"\(name)\" appears twice")
            }
        }
        var rows: [[String]] = []
        for record in records.dropFirst() {
            guard record.fields.count == header.count else {
                throw ProfileError(fileName, "line \(record.line): \(record.fields.count) fields, but the header has \(header.count)")
            }
            rows.append(record.fields)
        }
        guard !rows.isEmpty else { throw ProfileError(fileName, "has a header but no rows") }
        return CSVTable(header: header, rows: rows)
    }
}

extension String {
    fileprivate func trimmingCharacters(in set: String) -> String {
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { !set.unicodeScalars.contains($0) }),
            let last = scalars.lastIndex(where: { !set.unicodeScalars.contains($0) })
        else { return "" }
        return String(scalars[first...last])
    }
}
