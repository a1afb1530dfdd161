import Testing

@testable import AuthloadWire

/// One RFC 7541 Appendix C example: blocks sent in order on one connection, what each decodes to, and the table after.
struct HPACKExample: Sendable, CustomTestStringConvertible {
    struct Step: Sendable {
        var block: [UInt8]
        var headers: [HPACKHeader]
        /// The dynamic table after the block, newest first, as the RFC prints it.
        var table: [HPACKHeader]
        var tableSize: Int
    }

    var name: String
    var tableSize: Int
    var huffman: Bool
    var steps: [Step]
    var testDescription: String { name }

    static let date1 = "Mon, 21 Oct 2013 20:13:21 GMT"
    static let date2 = "Mon, 21 Oct 2013 20:13:22 GMT"
    static let cookie = "foo=ASDJKHQKBZXOQWEOPIUAXQWEOIU; max-age=3600; version=1"

    static func requests(_ name: String, huffman: Bool, blocks: [String]) -> HPACKExample {
        let authority = HPACKHeader(":authority", "www.example.com")
        let noCache = HPACKHeader("cache-control", "no-cache")
        let custom = HPACKHeader("custom-key", "custom-value")
        let get = [HPACKHeader(":method", "GET"), HPACKHeader(":scheme", "http"), HPACKHeader(":path", "/")]
        return HPACKExample(
            name: name, tableSize: 4096, huffman: huffman,
            steps: [
                Step(block: hexBytes(blocks[0]), headers: get + [authority], table: [authority], tableSize: 57),
                Step(
                    block: hexBytes(blocks[1]), headers: get + [authority, noCache], table: [noCache, authority],
                    tableSize: 110),
                Step(
                    block: hexBytes(blocks[2]),
                    headers: [
                        HPACKHeader(":method", "GET"), HPACKHeader(":scheme", "https"),
                        HPACKHeader(":path", "/index.html"), authority, custom
                    ],
                    table: [custom, noCache, authority], tableSize: 164)
            ])
    }

    static func responses(_ name: String, huffman: Bool, blocks: [String]) -> HPACKExample {
        let status302 = HPACKHeader(":status", "302")
        let status307 = HPACKHeader(":status", "307")
        let privateCache = HPACKHeader("cache-control", "private")
        let firstDate = HPACKHeader("date", date1)
        let secondDate = HPACKHeader("date", date2)
        let location = HPACKHeader("location", "https://www.example.com")
        let gzip = HPACKHeader("content-encoding", "gzip")
        let setCookie = HPACKHeader("set-cookie", cookie)
        return HPACKExample(
            name: name, tableSize: 256, huffman: huffman,
            steps: [
                Step(
                    block: hexBytes(blocks[0]), headers: [status302, privateCache, firstDate, location],
                    table: [location, firstDate, privateCache, status302], tableSize: 222),
                Step(
                    block: hexBytes(blocks[1]), headers: [status307, privateCache, firstDate, location],
                    table: [status307, location, firstDate, privateCache], tableSize: 222),
                Step(
                    block: hexBytes(blocks[2]),
                    headers: [HPACKHeader(":status", "200"), privateCache, secondDate, location, gzip, setCookie],
                    table: [setCookie, gzip, secondDate], tableSize: 215)
            ])
    }

    static let all: [HPACKExample] = [
        requests(
            "C.3 requests without Huffman coding", huffman: false,
            blocks: [
                "82 86 84 41 0f 77 77 77 2e 65 78 61 6d 70 6c 65 2e 63 6f 6d",
                "82 86 84 be 58 08 6e 6f 2d 63 61 63 68 65",
                "82 87 85 bf 40 0a 63 75 73 74 6f 6d 2d 6b 65 79 0c 63 75 73 74 6f 6d 2d 76 61 6c 75 65"
            ]),
        requests(
            "C.4 requests with Huffman coding", huffman: true,
            blocks: [
                "82 86 84 41 8c f1 e3 c2 e5 f2 3a 6b a0 ab 90 f4 ff",
                "82 86 84 be 58 86 a8 eb 10 64 9c bf",
                "82 87 85 bf 40 88 25 a8 49 e9 5b a9 7d 7f 89 25 a8 49 e9 5b b8 e8 b4 bf"
            ]),
        responses(
            "C.5 responses without Huffman coding", huffman: false,
            blocks: [
                """
                48 03 33 30 32 58 07 70 72 69 76 61 74 65 61 1d 4d 6f 6e 2c 20 32 31 20 4f 63 74 20 32 30 31 33
                20 32 30 3a 31 33 3a 32 31 20 47 4d 54 6e 17 68 74 74 70 73 3a 2f 2f 77 77 77 2e 65 78 61 6d 70
                6c 65 2e 63 6f 6d
                """,
                "48 03 33 30 37 c1 c0 bf",
                """
                88 c1 61 1d 4d 6f 6e 2c 20 32 31 20 4f 63 74 20 32 30 31 33 20 32 30 3a 31 33 3a 32 32 20 47 4d
                54 c0 5a 04 67 7a 69 70 77 38 66 6f 6f 3d 41 53 44 4a 4b 48 51 4b 42 5a 58 4f 51 57 45 4f 50 49
                55 41 58 51 57 45 4f 49 55 3b 20 6d 61 78 2d 61 67 65 3d 33 36 30 30 3b 20 76 65 72 73 69 6f 6e
                3d 31
                """
            ]),
        responses(
            "C.6 responses with Huffman coding", huffman: true,
            blocks: [
                """
                48 82 64 02 58 85 ae c3 77 1a 4b 61 96 d0 7a be 94 10 54 d4 44 a8 20 05 95 04 0b 81 66 e0 82 a6
                2d 1b ff 6e 91 9d 29 ad 17 18 63 c7 8f 0b 97 c8 e9 ae 82 ae 43 d3
                """,
                "48 83 64 0e ff c1 c0 bf",
                """
                88 c1 61 96 d0 7a be 94 10 54 d4 44 a8 20 05 95 04 0b 81 66 e0 84 a6 2d 1b ff c0 5a 83 9b d9 ab
                77 ad 94 e7 82 1d d7 f2 e6 c7 b3 35 df df cd 5b 39 60 d5 af 27 08 7f 36 72 c1 ab 27 0f b5 29 1f
                95 87 31 60 65 c0 03 ed 4e e5 b1 06 3d 50 07
                """
            ])
    ]
}

/// An RFC 7541 Appendix C.2 example: one field on an empty table.
struct HPACKFieldExample: Sendable, CustomTestStringConvertible {
    var name: String
    var block: [UInt8]
    var header: HPACKHeader
    var tableAfter: [HPACKHeader]
    var testDescription: String { name }

    static let all: [HPACKFieldExample] = [
        .init(
            name: "C.2.1 literal with indexing",
            block: hexBytes("40 0a 63 75 73 74 6f 6d 2d 6b 65 79 0d 63 75 73 74 6f 6d 2d 68 65 61 64 65 72"),
            header: HPACKHeader("custom-key", "custom-header"), tableAfter: [HPACKHeader("custom-key", "custom-header")]),
        .init(
            name: "C.2.2 literal without indexing", block: hexBytes("04 0c 2f 73 61 6d 70 6c 65 2f 70 61 74 68"),
            header: HPACKHeader(":path", "/sample/path", indexing: .withoutIndexing), tableAfter: []),
        .init(
            name: "C.2.3 literal never indexed", block: hexBytes("10 08 70 61 73 73 77 6f 72 64 06 73 65 63 72 65 74"),
            header: HPACKHeader("password", "secret", indexing: .never), tableAfter: []),
        .init(name: "C.2.4 indexed field", block: hexBytes("82"), header: HPACKHeader(":method", "GET"), tableAfter: [])
    ]
}

@Suite struct HPACKExampleTests {
    @Test("decodes the RFC 7541 C.3 to C.6 examples block by block, with the table the RFC prints", arguments: HPACKExample.all)
    func decodesExamples(example: HPACKExample) throws {
        var decoder = HPACKDecoder(maxTableSize: example.tableSize)
        for step in example.steps {
            let headers = try decoder.decode(step.block)
            #expect(headers == step.headers)
            #expect(decoder.dynamicTableEntries == step.table)
            #expect(decoder.dynamicTableSize == step.tableSize)
        }
    }

    @Test("encodes the RFC 7541 C.3 to C.6 examples to the bytes the RFC prints", arguments: HPACKExample.all)
    func encodesExamples(example: HPACKExample) {
        var encoder = HPACKEncoder(maxTableSize: example.tableSize, huffman: example.huffman)
        for step in example.steps {
            #expect(encoder.encode(step.headers) == step.block)
            #expect(encoder.dynamicTableEntries == step.table)
            #expect(encoder.dynamicTableSize == step.tableSize)
        }
    }

    @Test("decodes and encodes the RFC 7541 C.2 field examples", arguments: HPACKFieldExample.all)
    func fieldExamples(example: HPACKFieldExample) throws {
        var decoder = HPACKDecoder()
        #expect(try decoder.decode(example.block) == [example.header])
        #expect(decoder.dynamicTableEntries == example.tableAfter)
        var encoder = HPACKEncoder(huffman: false)
        #expect(encoder.encode([example.header]) == example.block)
        #expect(encoder.dynamicTableEntries == example.tableAfter)
    }

    @Test(
        "codes the RFC 7541 C.1 integer examples",
        arguments: [(10, 5, "0a"), (1337, 5, "1f 9a 0a"), (42, 8, "2a"), (30, 5, "1e"), (31, 5, "1f 00")])
    func integers(value: Int, prefix: Int, hex: String) throws {
        var output: [UInt8] = []
        HPACKEncoder.appendInteger(value, prefix: prefix, flags: 0, to: &output)
        #expect(output == hexBytes(hex))
        var position = 0
        #expect(try HPACKDecoder.integer(output, &position, prefix: prefix) == value)
        #expect(position == output.count)
    }

    @Test("Huffman codes every byte value and decodes it back")
    func huffmanRoundTrip() throws {
        let all = (0...255).map { UInt8($0) }
        for bytes in [all, all.reversed(), Array("authload".utf8), []] {
            var coded: [UInt8] = []
            HPACKHuffman.encode(bytes, into: &coded)
            #expect(coded.count == HPACKHuffman.encodedCount(bytes))
            #expect(try HPACKHuffman.decode(coded[...]) == bytes)
        }
    }
}
