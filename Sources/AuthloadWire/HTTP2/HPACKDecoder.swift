/// Decodes HPACK header blocks (RFC 7541) for one connection, keeping the dynamic table in step with the peer's encoder.
///
/// One decoder per connection direction: every block the peer sends must pass through it in order,
/// because each block may change the table later blocks refer to. Limits come from this side's
/// SETTINGS: `maxTableSize` is SETTINGS_HEADER_TABLE_SIZE as announced, `maxHeaderListSize` is
/// SETTINGS_MAX_HEADER_LIST_SIZE. An error other than ``HPACKError/Reason/headerListTooLarge`` leaves
/// the table out of step with the peer, so the decoder keeps throwing it.
///
/// ```swift
/// var decoder = HPACKDecoder()
/// let headers = try decoder.decode(headerBlock)   // [":status: 200", "content-type: application/json", …]
/// ```
public struct HPACKDecoder: Sendable {
    /// The SETTINGS_HEADER_TABLE_SIZE this side announced: no size update may go above it.
    public private(set) var maxTableSize: Int
    /// Largest decoded header list, counted as RFC 9113 §6.5.2 does (name and value octets plus 32 per field).
    public var maxHeaderListSize: Int
    private var table: HPACKDynamicTable
    private var failure: HPACKError?
    /// Set when this side lowered the limit below the table's: the next block must open with a size update.
    private var sizeUpdateRequired = false
    /// The Huffman literals of the last blocks and their text, by their place in the block (a field's name, then its
    /// value): a server repeats most of its header values from response to response without indexing them (nginx
    /// sends `date`, `last-modified`, `etag` so), and comparing the bytes costs less than decoding them again.
    private var recentLiterals: [(coded: [UInt8], text: String)] = []
    private static let recentLiteralLimit = 32

    /// Creates a decoder with the RFC 9113 default table size of 4096 bytes.
    public init(maxTableSize: Int = 4096, maxHeaderListSize: Int = 64 * 1024) {
        self.maxTableSize = max(0, maxTableSize)
        self.maxHeaderListSize = max(0, maxHeaderListSize)
        table = HPACKDynamicTable(maxSize: self.maxTableSize)
    }

    /// The dynamic table's current size in RFC 7541 §4.1 octets, for tests and diagnostics.
    public var dynamicTableSize: Int { table.size }
    /// The dynamic table's current limit, as the peer's latest size update set it.
    public var dynamicTableLimit: Int { table.maxSize }
    /// The dynamic table's entries, newest first.
    public var dynamicTableEntries: [HPACKHeader] {
        (0..<table.count).map { HPACKHeader(table[$0 + 1]!.name, table[$0 + 1]!.value) }
    }

    /// Changes the limit after this side's SETTINGS_HEADER_TABLE_SIZE changed and the peer acknowledged it.
    ///
    /// When the limit falls below the table's current size limit, the peer's next block must open with a
    /// size update to at most the new limit (RFC 7541 §4.2), or it fails with
    /// ``HPACKError/Reason/missingTableSizeUpdate``.
    public mutating func setMaxTableSize(_ newValue: Int) {
        maxTableSize = max(0, newValue)
        if table.maxSize > maxTableSize { sizeUpdateRequired = true }
    }

    /// Decodes one complete header block (the fragments of HEADERS or PUSH_PROMISE and its CONTINUATIONs, joined).
    ///
    /// - Throws: ``HPACKError``. For ``HPACKError/Reason/headerListTooLarge`` the block was decoded to the
    ///   end, so the table is still right and later blocks decode; for every other reason the decoder
    ///   throws the same error from then on.
    public mutating func decode(_ block: some Collection<UInt8>) throws(HPACKError) -> [HPACKHeader] {
        if let failure { throw failure }
        let bytes = Array(block)
        var headers: [HPACKHeader] = []
        headers.reserveCapacity(16)
        var listSize = 0
        var listTooLarge: HPACKError?
        var position = 0
        var sawField = false
        var literalSlot = 0
        do throws(HPACKError) {
            while position < bytes.count {
                let start = position
                let first = bytes[position]
                guard !sizeUpdateRequired || first & 0xE0 == 0x20 else {
                    throw HPACKError(
                        .missingTableSizeUpdate, at: start, "block does not open with the size update to \(maxTableSize) or less")
                }
                let header: HPACKHeader
                if first & 0x80 != 0 {
                    let index = try Self.integer(bytes, &position, prefix: 7)
                    let entry = try field(at: index, offset: start)
                    header = HPACKHeader(entry.name, entry.value)
                } else if first & 0xC0 == 0x40 {
                    header = try literal(bytes, &position, prefix: 6, indexing: .incremental, slot: &literalSlot)
                    table.insert(name: header.name, value: header.value)
                } else if first & 0xE0 == 0x20 {
                    guard !sawField else {
                        throw HPACKError(.tableSizeUpdateNotAtStart, at: start, "dynamic table size update after a header field")
                    }
                    let size = try Self.integer(bytes, &position, prefix: 5)
                    guard size <= maxTableSize else {
                        throw HPACKError(
                            .tableSizeUpdateAboveLimit, at: start, "dynamic table size update to \(size) above the limit \(maxTableSize)")
                    }
                    table.setMaxSize(size)
                    sizeUpdateRequired = false
                    continue
                } else {
                    header = try literal(
                        bytes, &position, prefix: 4, indexing: first & 0x10 != 0 ? .never : .withoutIndexing, slot: &literalSlot)
                }
                sawField = true
                listSize += header.size
                if listSize > maxHeaderListSize {
                    if listTooLarge == nil {
                        listTooLarge = HPACKError(
                            .headerListTooLarge, at: start, "header list larger than \(maxHeaderListSize) bytes")
                        headers = []
                    }
                } else {
                    headers.append(header)
                }
            }
        } catch {
            failure = error
            throw error
        }
        if let listTooLarge { throw listTooLarge }
        return headers
    }

    private func field(at index: Int, offset: Int) throws(HPACKError) -> (name: String, value: String) {
        if index >= 1, index <= HPACKStaticTable.entries.count { return HPACKStaticTable.entries[index - 1] }
        if let entry = table[index - HPACKStaticTable.entries.count] { return entry }
        throw HPACKError(
            .invalidIndex, at: offset,
            "index \(index) outside the static table and the \(table.count)-entry dynamic table")
    }

    private mutating func literal(
        _ bytes: [UInt8], _ position: inout Int, prefix: Int, indexing: HPACKHeader.Indexing, slot: inout Int
    ) throws(HPACKError) -> HPACKHeader {
        let start = position
        let nameIndex = try Self.integer(bytes, &position, prefix: prefix)
        let name = nameIndex == 0 ? try string(bytes, &position, slot: slot) : try field(at: nameIndex, offset: start).name
        let value = try string(bytes, &position, slot: slot + 1)
        slot += 2
        return HPACKHeader(name, value, indexing: indexing)
    }

    /// A string literal, as ``string(_:_:)`` reads it; a Huffman literal equal to the one last seen at `slot` is not
    /// decoded again.
    private mutating func string(_ bytes: [UInt8], _ position: inout Int, slot: Int) throws(HPACKError) -> String {
        guard position < bytes.count, bytes[position] & 0x80 != 0, slot < Self.recentLiteralLimit else {
            return try Self.string(bytes, &position)
        }
        var next = position
        let length = try Self.integer(bytes, &next, prefix: 7)
        guard length <= bytes.count - next else { return try Self.string(bytes, &position) }
        let coded = bytes[next..<next + length]
        if slot < recentLiterals.count, Self.equal(recentLiterals[slot].coded, coded) {
            position = next + length
            return recentLiterals[slot].text
        }
        let text = try Self.string(bytes, &position)
        if slot >= recentLiterals.count {
            recentLiterals.reserveCapacity(Self.recentLiteralLimit)
            // An empty Huffman literal is the empty string, so a slot not yet filled matches only what it holds.
            while recentLiterals.count <= slot { recentLiterals.append(([], "")) }
        }
        recentLiterals[slot] = (Array(coded), text)
        return text
    }

    private static func equal(_ a: [UInt8], _ b: ArraySlice<UInt8>) -> Bool {
        guard a.count == b.count else { return false }
        // Through buffer pointers: `elementsEqual` on the two collections showed as 1 % of the client's CPU under perf.
        return a.withUnsafeBufferPointer { a in
            b.withUnsafeBufferPointer { b in
                for index in 0..<a.count where a[index] != b[index] { return false }
                return true
            }
        }
    }

    /// Reads an RFC 7541 §5.1 integer whose first byte keeps `prefix` low bits.
    static func integer(_ bytes: [UInt8], _ position: inout Int, prefix: Int) throws(HPACKError) -> Int {
        let start = position
        let mask = (1 << prefix) - 1
        var value = Int(bytes[position]) & mask
        position += 1
        guard value == mask else { return value }
        var shift = 0
        while true {
            guard position < bytes.count else { throw HPACKError(.truncated, at: start, "integer cut off") }
            let byte = bytes[position]
            position += 1
            value += Int(byte & 0x7F) << shift
            guard value <= Int(UInt32.max) else {
                throw HPACKError(.integerOverflow, at: start, "integer larger than 2^32-1")
            }
            if byte & 0x80 == 0 { return value }
            shift += 7
            guard shift <= 28 else { throw HPACKError(.integerOverflow, at: start, "integer with too many continuation bytes") }
        }
    }

    /// Reads an RFC 7541 §5.2 string literal, Huffman coded or raw.
    static func string(_ bytes: [UInt8], _ position: inout Int) throws(HPACKError) -> String {
        let start = position
        guard position < bytes.count else { throw HPACKError(.truncated, at: start, "string literal missing") }
        let huffman = bytes[position] & 0x80 != 0
        let length = try integer(bytes, &position, prefix: 7)
        guard length <= bytes.count - position else {
            throw HPACKError(.truncated, at: start, "string of \(length) bytes with \(bytes.count - position) left")
        }
        let raw = bytes[position..<position + length]
        position += length
        guard huffman else { return String(decoding: raw, as: UTF8.self) }
        // Decoded straight into the String's storage: no code is shorter than 5 bits, so 8/5 of the length is room
        // enough. Bytes that are not UTF-8 are repaired, as `String(decoding:as:)` does.
        var failure: HPACKHuffman.Failure?
        let text = String(unsafeUninitializedCapacity: length * 8 / 5 + 1) { buffer in
            var count = 0
            do throws(HPACKHuffman.Failure) {
                try HPACKHuffman.decode(raw) { symbol in
                    buffer[count] = symbol
                    count += 1
                }
            } catch {
                failure = error
            }
            return count
        }
        switch failure {
        case nil: return text
        case .eos?: throw HPACKError(.huffmanEOS, at: start, "Huffman string contains EOS")
        case .padding?: throw HPACKError(.invalidHuffmanPadding, at: start, "Huffman padding longer than 7 bits or not all ones")
        }
    }
}
