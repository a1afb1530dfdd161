/// Encodes header lists as HPACK blocks (RFC 7541) for one connection, indexing fields so repeats cost a byte or two.
///
/// A login flow sends the same `:authority`, `user-agent`, `accept` and cookie on every request; a
/// browser's encoder puts them in the dynamic table once and refers to them after, and so does this
/// one, so the bytes on the wire look like a real client's. Fields marked ``HPACKHeader/Indexing/never``
/// or ``HPACKHeader/Indexing/withoutIndexing`` stay out of the table.
///
/// ```swift
/// var encoder = HPACKEncoder()
/// let block = encoder.encode([HPACKHeader(":method", "POST"), HPACKHeader(":path", "/login"), …])
/// ```
public struct HPACKEncoder: Sendable {
    /// Whether strings are Huffman coded when that is no longer than raw, as the RFC 7541 examples are.
    public var huffman: Bool {
        didSet { lastBlock = nil }
    }
    private var table: HPACKDynamicTable
    /// The smallest and the final size set since the last block, which the next block must announce.
    private var pendingUpdate: (smallest: Int, final: Int)?
    /// The last header list and its block, when encoding it changed nothing: the same list encodes to the same bytes
    /// until the table changes, and a load test sends the same request over and over. Comparing the fields costs
    /// less than looking each up in the static and dynamic tables again.
    private var lastBlock: (headers: [HPACKHeader], block: [UInt8])?

    /// Creates an encoder for a peer that allows `maxTableSize` (its SETTINGS_HEADER_TABLE_SIZE; 4096 by default).
    public init(maxTableSize: Int = 4096, huffman: Bool = true) {
        self.huffman = huffman
        table = HPACKDynamicTable(maxSize: max(0, maxTableSize))
    }

    /// The dynamic table's current size in RFC 7541 §4.1 octets.
    public var dynamicTableSize: Int { table.size }
    /// The dynamic table's entries, newest first.
    public var dynamicTableEntries: [HPACKHeader] {
        (0..<table.count).map { HPACKHeader(table[$0 + 1]!.name, table[$0 + 1]!.value) }
    }

    /// Uses a new table size, as when the peer's SETTINGS_HEADER_TABLE_SIZE changes; the next block announces it.
    public mutating func setMaxTableSize(_ newValue: Int) {
        let size = max(0, newValue)
        lastBlock = nil
        table.setMaxSize(size)
        pendingUpdate = (min(pendingUpdate?.smallest ?? size, size), size)
    }

    /// Encodes one header list as a header block.
    public mutating func encode(_ headers: [HPACKHeader]) -> [UInt8] {
        if let lastBlock, lastBlock.headers == headers { return lastBlock.block }
        lastBlock = nil
        var output: [UInt8] = []
        var changed = false
        if let update = pendingUpdate {
            // RFC 7541 §4.2: a decrease followed by an increase is announced as both.
            if update.smallest < update.final { Self.appendInteger(update.smallest, prefix: 5, flags: 0x20, to: &output) }
            Self.appendInteger(update.final, prefix: 5, flags: 0x20, to: &output)
            pendingUpdate = nil
            changed = true
        }
        for header in headers { changed = encode(header, into: &output) || changed }
        if !changed { lastBlock = (headers, output) }
        return output
    }

    /// Appends one field; true when it entered the dynamic table.
    private mutating func encode(_ header: HPACKHeader, into output: inout [UInt8]) -> Bool {
        let staticCount = HPACKStaticTable.entries.count
        let staticField = HPACKStaticTable.fieldIndex[header.name]?[header.value]
        let dynamic = table.find(name: header.name, value: header.value)
        if header.indexing != .never, let index = staticField ?? dynamic.field.map({ $0 + staticCount }) {
            Self.appendInteger(index, prefix: 7, flags: 0x80, to: &output)
            return false
        }
        let nameIndex = HPACKStaticTable.nameIndex[header.name] ?? dynamic.name.map { $0 + staticCount } ?? 0
        switch header.indexing {
        case .incremental: Self.appendInteger(nameIndex, prefix: 6, flags: 0x40, to: &output)
        case .withoutIndexing: Self.appendInteger(nameIndex, prefix: 4, flags: 0x00, to: &output)
        case .never: Self.appendInteger(nameIndex, prefix: 4, flags: 0x10, to: &output)
        }
        if nameIndex == 0 { appendString(header.name, to: &output) }
        appendString(header.value, to: &output)
        guard header.indexing == .incremental else { return false }
        table.insert(name: header.name, value: header.value)
        return true
    }

    private func appendString(_ string: String, to output: inout [UInt8]) {
        let bytes = string.utf8
        let coded = HPACKHuffman.encodedCount(bytes)
        if huffman && coded <= bytes.count && !bytes.isEmpty {
            Self.appendInteger(coded, prefix: 7, flags: 0x80, to: &output)
            HPACKHuffman.encode(bytes, into: &output)
        } else {
            Self.appendInteger(bytes.count, prefix: 7, flags: 0x00, to: &output)
            output.append(contentsOf: bytes)
        }
    }

    /// Appends an RFC 7541 §5.1 integer with `prefix` bits in the first byte, whose high bits are `flags`.
    static func appendInteger(_ value: Int, prefix: Int, flags: UInt8, to output: inout [UInt8]) {
        let mask = (1 << prefix) - 1
        guard value >= mask else {
            output.append(flags | UInt8(value))
            return
        }
        output.append(flags | UInt8(mask))
        var rest = value - mask
        while rest >= 128 {
            output.append(UInt8(rest & 0x7F) | 0x80)
            rest >>= 7
        }
        output.append(UInt8(rest))
    }
}
