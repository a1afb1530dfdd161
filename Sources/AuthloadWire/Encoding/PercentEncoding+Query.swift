extension PercentEncoding {
    /// A request target: `path`, `?`, and the `name=value` pairs joined by `&`, each value percent-encoded and each name
    /// written as it is.
    ///
    /// Byte for byte `"\(path)?" + pairs.map { "\($0)=\(encode($1))" }.joined(separator: "&")`, written into one buffer:
    /// built that way, a GCCS flow's two GET targets made a string per pair and joined them.
    ///
    /// ```swift
    /// PercentEncoding.target("/api/v3/auth", query: [("deviceId", "d 1"), ("clientKey", "k")])
    /// // "/api/v3/auth?deviceId=d%201&clientKey=k"
    /// ```
    public static func target(_ path: String, query pairs: [(name: String, value: String)]) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(path.utf8.count + pairs.reduce(1) { $0 + $1.name.utf8.count + 3 * $1.value.utf8.count + 2 })
        bytes.append(contentsOf: path.utf8)
        bytes.append(UInt8(ascii: "?"))
        for (index, pair) in pairs.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: "&")) }
            bytes.append(contentsOf: pair.name.utf8)
            bytes.append(UInt8(ascii: "="))
            append(encoding: pair.value, to: &bytes)
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
