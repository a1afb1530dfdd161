import Testing

@testable import AuthloadWire

@Suite struct HPACKEncoderTests {
    static let loginRequest = [
        HPACKHeader(":method", "POST"), HPACKHeader(":scheme", "https"),
        HPACKHeader(":authority", "login.example.com"), HPACKHeader(":path", "/idp/idx/identify"),
        HPACKHeader("user-agent", "authload/1.0"), HPACKHeader("accept", "application/ion+json; okta-version=1.0.0"),
        HPACKHeader("content-type", "application/ion+json; okta-version=1.0.0"),
        HPACKHeader("cookie", "JSESSIONID=4F2A9C1B7E3D5A60; DT=DI1Y7h3kQz2"), HPACKHeader("content-length", "212")
    ]

    @Test("repeats of a login flow's request headers cost one byte a field after the first request")
    func loginFlowIndexes() throws {
        var encoder = HPACKEncoder()
        var decoder = HPACKDecoder()
        let first = encoder.encode(Self.loginRequest)
        let second = encoder.encode(Self.loginRequest)
        let third = encoder.encode(Self.loginRequest)
        #expect(first.count > 100)
        #expect(second.count == Self.loginRequest.count)
        #expect(third == second)
        for block in [first, second, third] { #expect(try decoder.decode(block) == Self.loginRequest) }
    }

    @Test("a repeated header list encodes to the same block until the table changes, then announces the change first")
    func repeatedListAfterSizeChange() throws {
        var encoder = HPACKEncoder()
        var decoder = HPACKDecoder()
        let second = encoder.encode(Self.loginRequest)
        #expect(try decoder.decode(second) == Self.loginRequest)
        let repeated = encoder.encode(Self.loginRequest)
        #expect(encoder.encode(Self.loginRequest) == repeated)
        encoder.setMaxTableSize(0)
        let afterUpdate = encoder.encode(Self.loginRequest)
        #expect(afterUpdate.first == 0x20, "the block opens with the size update to 0")
        #expect(afterUpdate != repeated)
        for block in [repeated, afterUpdate] { #expect(try decoder.decode(block) == Self.loginRequest) }
        #expect(encoder.dynamicTableEntries.isEmpty)
        encoder.huffman = false
        let raw = encoder.encode(Self.loginRequest)
        #expect(raw.count > afterUpdate.count, "a change of coding is not answered with the Huffman block")
        #expect(try decoder.decode(raw) == Self.loginRequest)
    }

    @Test("a field marked never-indexed stays out of both tables and keeps its mark")
    func neverIndexed() throws {
        var encoder = HPACKEncoder()
        var decoder = HPACKDecoder()
        let secret = HPACKHeader("authorization", "Bearer eyJhbGciOi", indexing: .never)
        for _ in 0..<2 {
            let decoded = try decoder.decode(encoder.encode([secret]))
            #expect(decoded == [secret])
        }
        #expect(encoder.dynamicTableEntries.isEmpty)
        #expect(decoder.dynamicTableEntries.isEmpty)
    }

    @Test("a field larger than the table empties it, on both ends alike")
    func oversizedField() throws {
        var encoder = HPACKEncoder(maxTableSize: 64)
        var decoder = HPACKDecoder(maxTableSize: 64)
        let small = HPACKHeader("x-a", "1")
        let large = HPACKHeader("x-large", String(repeating: "v", count: 80))
        #expect(try decoder.decode(encoder.encode([small, large, small])) == [small, large, small])
        #expect(encoder.dynamicTableEntries == [small])
        #expect(decoder.dynamicTableEntries == encoder.dynamicTableEntries)
    }
}
