import Testing

@testable import AuthloadWire

@Suite struct DigestTests {
    @Test(
        "matches the published SHA-1 and SHA-256 vectors",
        arguments: [
            ("", "da39a3ee5e6b4b0d3255bfef95601890afd80709", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
            ("abc", "a9993e364706816aba3e25717850c26c9cd0d89d", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
            (
                "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", "84983e441c3bd26ebaae4aa1f95129e5e54670f1",
                "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
            )
        ])
    func vectors(input: String, sha1: String, sha256: String) {
        #expect(hexString(Digest.sha1(Array(input.utf8))) == sha1)
        #expect(hexString(Digest.sha256(Array(input.utf8))) == sha256)
        #expect(hexString(Digest.sha256(input.utf8)) == sha256)
    }

    @Test("hashes a million bytes as OpenSSL does")
    func longInput() {
        #expect(hexString(Digest.sha1(Array(repeating: UInt8(ascii: "a"), count: 1_000_000))) == "34aa973cd4c4daa4f61eeb2bdbad27316534016f")
    }

    @Test("derives the RFC 7636 Appendix B PKCE challenge")
    func pkce() {
        let verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
        #expect(Base64.urlEncoded(Digest.sha256(Array(verifier.utf8))) == "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM")
    }

    @Test("returns the requested number of random bytes, different each time", arguments: [0, 1, 4, 16, 32, 1000])
    func randomBytes(count: Int) {
        let first = Digest.secureRandomBytes(count: count)
        let second = Digest.secureRandomBytes(count: count)
        #expect(first.count == count)
        #expect(second.count == count)
        if count >= 16 { #expect(first != second) }
    }

    @Test("hands out each pooled random byte once, across the pool's blocks")
    func pooledRandomBytes() {
        // 600 draws of 16 bytes span more than two 4 KiB blocks: a block handed out twice, or a draw taken across the
        // end of one, would repeat a draw (a chance of about 2⁻¹²⁸ for truly fresh bytes).
        let draws = (0..<600).map { _ in Digest.secureRandomBytes(count: 16) }
        #expect(Set(draws).count == draws.count)
        #expect(draws.allSatisfy { $0.count == 16 })
        // Nor are the bytes zeroed ones: the pool zeroes what it hands out, and must not hand that out again.
        #expect(!draws.contains([UInt8](repeating: 0, count: 16)))
    }
}
