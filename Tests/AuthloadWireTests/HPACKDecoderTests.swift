import Testing

@testable import AuthloadWire

@Suite struct HPACKDecoderTests {
    @Test(
        "refuses each malformed block with its own reason",
        arguments: [
            ("index 0", "80", HPACKError.Reason.invalidIndex),
            ("index past an empty dynamic table", "be", .invalidIndex),
            ("name index past the tables", "7f 00 01 61", .invalidIndex),
            ("integer beyond 32 bits", "ff ff ff ff ff ff 0f", .integerOverflow),
            ("integer with too many continuation bytes", "ff 80 80 80 80 80 00", .integerOverflow),
            ("integer cut off", "ff 80", .truncated),
            ("value missing", "41", .truncated),
            ("string longer than the block", "40 05 61 62", .truncated),
            ("Huffman padding of 11 bits", "40 82 1f ff 81 1f", .invalidHuffmanPadding),
            ("Huffman padding of zeros", "40 81 18 81 1f", .invalidHuffmanPadding),
            ("EOS in a Huffman string", "40 84 ff ff ff ff 81 1f", .huffmanEOS),
            ("table size update above the limit", "3f e1 3f", .tableSizeUpdateAboveLimit),
            ("table size update after a field", "82 20", .tableSizeUpdateNotAtStart)
        ])
    func malformed(name: String, hex: String, reason: HPACKError.Reason) {
        var decoder = HPACKDecoder()
        #expect {
            _ = try decoder.decode(hexBytes(hex))
        } throws: { error in
            (error as? HPACKError)?.reason == reason
        }
    }

    @Test("decodes each unindexed Huffman literal to its own text, whether the last block had the same one at that place or not")
    func repeatedLiterals() throws {
        var encoder = HPACKEncoder()
        var decoder = HPACKDecoder()
        // Sent without indexing, as nginx sends `date`: every block carries the Huffman literals again.
        func block(_ date: String, _ etag: String) -> [HPACKHeader] {
            [
                HPACKHeader(":status", "200"), HPACKHeader("date", date, indexing: .withoutIndexing),
                HPACKHeader("etag", etag, indexing: .withoutIndexing)
            ]
        }
        let blocks = [
            block("Thu, 26 Nov 2026 05:00:00 GMT", "\"65f1-35\""), block("Thu, 26 Nov 2026 05:00:00 GMT", "\"65f1-35\""),
            block("Thu, 26 Nov 2026 05:00:01 GMT", "\"65f1-35\""), block("Thu, 26 Nov 2026 05:00:00 GMT", "\"65f1-36\""),
            block("Thu, 26 Nov 2026 05:00:00 GMT", "\"65f1-3\""), block("Thu, 26 Nov 2026 05:00:00 GMT", "\"65f1-36\"")
        ]
        for headers in blocks { #expect(try decoder.decode(encoder.encode(headers)) == headers) }
        // The same block cut short in its last literal still fails, though its first literal is the one seen last.
        var cut = encoder.encode(blocks[3])
        cut.removeLast()
        let error = #expect(throws: HPACKError.self) { try decoder.decode(cut) }
        #expect(error?.reason == .truncated)
    }

    @Test("keeps throwing after an error, since its table no longer matches the peer's")
    func staysFailed() throws {
        var decoder = HPACKDecoder()
        let first = #expect(throws: HPACKError.self) { try decoder.decode(hexBytes("be")) }
        let second = #expect(throws: HPACKError.self) { try decoder.decode(hexBytes("82")) }
        #expect(first == second)
    }

    @Test("decodes a whole oversized header list, so the next block still decodes")
    func headerListTooLarge() throws {
        var decoder = HPACKDecoder(maxHeaderListSize: 60)
        let block = hexBytes("82 86 41 0f 77 77 77 2e 65 78 61 6d 70 6c 65 2e 63 6f 6d")
        let error = #expect(throws: HPACKError.self) { try decoder.decode(block) }
        #expect(error?.reason == .headerListTooLarge)
        #expect(try decoder.decode(hexBytes("be")) == [HPACKHeader(":authority", "www.example.com")])
    }

    @Test("applies a size update at the start of a block, evicting what no longer fits")
    func sizeUpdate() throws {
        var decoder = HPACKDecoder()
        _ = try decoder.decode(hexBytes("41 0f 77 77 77 2e 65 78 61 6d 70 6c 65 2e 63 6f 6d"))
        #expect(decoder.dynamicTableSize == 57)
        #expect(try decoder.decode(hexBytes("20 3f 11 82")) == [HPACKHeader(":method", "GET")])
        #expect(decoder.dynamicTableEntries.isEmpty)
        #expect(decoder.dynamicTableLimit == 48)
    }

    @Test("an encoder's size change reaches the decoder through the next block")
    func encoderSizeChange() throws {
        var encoder = HPACKEncoder()
        var decoder = HPACKDecoder()
        let headers = [HPACKHeader("x-a", "1"), HPACKHeader("x-b", "2")]
        #expect(try decoder.decode(encoder.encode(headers)) == headers)
        encoder.setMaxTableSize(0)
        encoder.setMaxTableSize(100)
        let block = encoder.encode(headers)
        #expect(Array(block.prefix(3)) == hexBytes("20 3f 45"))
        #expect(try decoder.decode(block) == headers)
        #expect(decoder.dynamicTableEntries == encoder.dynamicTableEntries)
    }

    @Test("after this side lowers its table size, requires the next block to open with a size update")
    func requiresSizeUpdate() throws {
        var decoder = HPACKDecoder()
        decoder.setMaxTableSize(100)
        let error = #expect(throws: HPACKError.self) { try decoder.decode(hexBytes("82")) }
        #expect(error?.reason == .missingTableSizeUpdate)

        var updated = HPACKDecoder()
        updated.setMaxTableSize(100)
        #expect(try updated.decode(hexBytes("3f 45 82")) == [HPACKHeader(":method", "GET")])
        #expect(updated.dynamicTableLimit == 100)
        #expect(try updated.decode(hexBytes("82")) == [HPACKHeader(":method", "GET")])
        var small = HPACKDecoder(maxTableSize: 100)
        #expect(throws: HPACKError.self) { try small.decode(hexBytes("3f 46")) }
    }
}
