import Testing

@testable import AuthloadWire

@Suite("HMAC-SHA-256 under a key set up once")
struct HMACKeyTests {
    /// RFC 4231 test cases 1, 2 and 6 (a key longer than a block, hashed first): key, data, HMAC-SHA-256.
    static let rfc4231: [([UInt8], String, String)] = [
        (Array(repeating: 0x0b, count: 20), "Hi There", "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"),
        (Array("Jefe".utf8), "what do ya want for nothing?", "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"),
        (
            Array(repeating: 0xaa, count: 131), "Test Using Larger Than Block-Size Key - Hash Key First",
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"
        )
    ]

    @Test("matches the RFC 4231 vectors, as the one-shot HMAC does, and again when used again", arguments: rfc4231)
    func vectors(key: [UInt8], data: String, expected: String) {
        let set = HMACKey(key)
        #expect(hexString(Digest.hmacSHA256(key: key, Array(data.utf8))) == expected)
        #expect(hexString(set.sha256(Array(data.utf8))) == expected)
        #expect(hexString(set.sha256(Array("other data".utf8))) == hexString(Digest.hmacSHA256(key: key, Array("other data".utf8))))
        #expect(hexString(set.sha256(Array(data.utf8))) == expected, "a used context starts over with the key")
    }

    @Test("an empty key and empty data give what the one-shot HMAC gives")
    func empty() {
        #expect(HMACKey([]).sha256([]) == Digest.hmacSHA256(key: [], []))
        #expect(HMACKey([1, 2, 3]).sha256([]) == Digest.hmacSHA256(key: [1, 2, 3], []))
    }

    @Test("tasks using one key at once each get their own data's HMAC")
    func concurrent() async {
        let key = HMACKey(Array("shared".utf8))
        let mismatches = await withTaskGroup(of: Int.self) { group in
            for task in 0..<8 {
                group.addTask {
                    var mismatches = 0
                    for round in 0..<200 {
                        let data = Array("task \(task) round \(round)".utf8)
                        if key.sha256(data) != Digest.hmacSHA256(key: Array("shared".utf8), data) { mismatches += 1 }
                    }
                    return mismatches
                }
            }
            return await group.reduce(0, +)
        }
        #expect(mismatches == 0)
    }
}
