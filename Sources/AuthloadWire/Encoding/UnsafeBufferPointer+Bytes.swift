extension UnsafeBufferPointer<UInt8> {
    /// Whether these are `text`'s UTF-8 bytes: the counts, then the bytes through both buffers.
    ///
    /// The generic `elementsEqual` with a `String.UTF8View` walked the view an element at a time, each step asking
    /// where the string keeps its bytes: reading a form's field names with it was half a percent of an Okta soak.
    public func isUTF8(of text: String) -> Bool {
        var text = text
        return text.withUTF8 { $0.hasSameBytes(as: self) }
    }

    /// Whether both hold the same bytes, compared one by one through the two buffers.
    public func hasSameBytes(as other: UnsafeBufferPointer<UInt8>) -> Bool {
        guard count == other.count else { return false }
        for index in 0..<count where self[index] != other[index] { return false }
        return true
    }
}
