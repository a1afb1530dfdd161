/// The 61 entries of RFC 7541 Appendix A, which both ends know without sending them.
enum HPACKStaticTable {
    /// Entries by index minus one.
    static let entries: [(name: String, value: String)] = [
        (":authority", ""), (":method", "GET"), (":method", "POST"), (":path", "/"), (":path", "/index.html"),
        (":scheme", "http"), (":scheme", "https"), (":status", "200"), (":status", "204"), (":status", "206"),
        (":status", "304"), (":status", "400"), (":status", "404"), (":status", "500"), ("accept-charset", ""),
        ("accept-encoding", "gzip, deflate"), ("accept-language", ""), ("accept-ranges", ""), ("accept", ""),
        ("access-control-allow-origin", ""), ("age", ""), ("allow", ""), ("authorization", ""),
        ("cache-control", ""), ("content-disposition", ""), ("content-encoding", ""), ("content-language", ""),
        ("content-length", ""), ("content-location", ""), ("content-range", ""), ("content-type", ""),
        ("cookie", ""), ("date", ""), ("etag", ""), ("expect", ""), ("expires", ""), ("from", ""), ("host", ""),
        ("if-match", ""), ("if-modified-since", ""), ("if-none-match", ""), ("if-range", ""),
        ("if-unmodified-since", ""), ("last-modified", ""), ("link", ""), ("location", ""), ("max-forwards", ""),
        ("proxy-authenticate", ""), ("proxy-authorization", ""), ("range", ""), ("referer", ""), ("refresh", ""),
        ("retry-after", ""), ("server", ""), ("set-cookie", ""), ("strict-transport-security", ""),
        ("transfer-encoding", ""), ("user-agent", ""), ("vary", ""), ("via", ""), ("www-authenticate", "")
    ]

    /// The lowest index of each name, so the encoder finds a name reference without a scan.
    static let nameIndex: [String: Int] = {
        var result: [String: Int] = [:]
        for (offset, entry) in entries.enumerated() where result[entry.name] == nil { result[entry.name] = offset + 1 }
        return result
    }()

    /// The index of each name and value pair, for a fully indexed representation.
    static let fieldIndex: [String: [String: Int]] = {
        var result: [String: [String: Int]] = [:]
        for (offset, entry) in entries.enumerated() where result[entry.name]?[entry.value] == nil {
            result[entry.name, default: [:]][entry.value] = offset + 1
        }
        return result
    }()
}
