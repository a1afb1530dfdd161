extension Substring {
    /// Whether it begins with `prefix`: its first `prefix.utf8.count` bytes compared as one string, where the generic
    /// `hasPrefix` walks both element by element (the staging server asks it of every request's path).
    func startsWith(_ prefix: String) -> Bool {
        let bytes = utf8
        guard let end = bytes.index(bytes.startIndex, offsetBy: prefix.utf8.count, limitedBy: bytes.endIndex) else { return false }
        return self[..<end] == prefix
    }
}
