/// Why a header block could not be decoded, so the connection can be failed with COMPRESSION_ERROR.
///
/// HPACK state is shared by every stream of a connection: after most of these errors the decoder's
/// dynamic table no longer matches the peer's, and RFC 9113 §4.3 makes that a connection error.
/// The exception is ``Reason/headerListTooLarge``: the whole block was still decoded, so the table
/// stays in step and only the one stream needs to be refused.
public struct HPACKError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong, for callers that classify errors (the text is for people).
    public enum Reason: Sendable, Hashable, CaseIterable {
        /// An index is 0 or beyond the static and dynamic tables together.
        case invalidIndex
        /// A prefixed integer does not fit in 32 bits, or uses more continuation bytes than such a value needs.
        case integerOverflow
        /// The block ends inside a representation or a string literal.
        case truncated
        /// Huffman padding is longer than 7 bits or is not the most significant bits of EOS (all ones).
        case invalidHuffmanPadding
        /// A Huffman-coded string contains the EOS symbol.
        case huffmanEOS
        /// A dynamic table size update asks for more than the limit this side announced.
        case tableSizeUpdateAboveLimit
        /// A dynamic table size update follows a header field in the block.
        case tableSizeUpdateNotAtStart
        /// This side lowered its table size, and the peer's next block does not open with the size update RFC 7541 §4.2 requires.
        case missingTableSizeUpdate
        /// The decoded header list is larger than the configured limit (RFC 9113 §6.5.2 sizes).
        case headerListTooLarge
    }

    public let reason: Reason
    /// Offset in the header block of the representation that failed.
    public let offset: Int
    public let description: String

    init(_ reason: Reason, at offset: Int, _ detail: String) {
        self.reason = reason
        self.offset = offset
        self.description = "\(detail) at byte \(offset) of the header block"
    }
}
