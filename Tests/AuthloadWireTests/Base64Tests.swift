import AuthloadCore
import Testing

@testable import AuthloadWire

@Suite struct Base64Tests {
    @Test(
        "encodes and decodes the RFC 4648 §10 vectors",
        arguments: [
            ("", "", ""), ("f", "Zg==", "Zg"), ("fo", "Zm8=", "Zm8"), ("foo", "Zm9v", "Zm9v"),
            ("foob", "Zm9vYg==", "Zm9vYg"), ("fooba", "Zm9vYmE=", "Zm9vYmE"), ("foobar", "Zm9vYmFy", "Zm9vYmFy")
        ])
    func vectors(text: String, standard: String, url: String) {
        #expect(Base64.encoded(Array(text.utf8)) == standard)
        #expect(Base64.urlEncoded(Array(text.utf8)) == url)
        #expect(Base64.decoded(standard) == Array(text.utf8))
        #expect(Base64.urlDecoded(url) == Array(text.utf8))
        #expect(Base64.urlDecoded(standard) == Array(text.utf8))
        // Bytes without contiguous storage (a lazy map) encode as an array of them does.
        #expect(Base64.encoded(text.utf8.lazy.map { $0 }) == standard)
        #expect(Base64.urlEncoded(text.utf8.lazy.map { $0 }) == url)
    }

    @Test("uses - and _ in the URL alphabet")
    func alphabets() {
        #expect(Base64.encoded([0xFB, 0xFF, 0xBF]) == "+/+/")
        #expect(Base64.urlEncoded([0xFB, 0xFF, 0xBF]) == "-_-_")
        #expect(Base64.decoded("+/+/") == [0xFB, 0xFF, 0xBF])
        #expect(Base64.urlDecoded("-_-_") == [0xFB, 0xFF, 0xBF])
    }

    @Test(
        "rejects standard text that is not a canonical encoding",
        arguments: [
            "Zg", "Zg=", "Zg===", "Z===", "====", "Zh==", "Zm9=", "Zm9v YmFy", "Zm9v\n", "Zg==Zg==", "-_-_", "Zm9v\u{0}"
        ])
    func rejectsStandard(text: String) {
        #expect(Base64.decoded(text) == nil)
    }

    @Test(
        "rejects URL text that is not a canonical encoding",
        arguments: ["Z", "Zg=", "Zh", "+/+/", "Zm9vY", "Zg=a", "==", "Zm\u{e9}", "Zm9v\u{7f}Zg"])
    func rejectsURL(text: String) {
        #expect(Base64.urlDecoded(text) == nil)
    }

    @Test("round-trips every length up to 300")
    func roundTrip() {
        var generator = SplitMix64(seed: 64)
        for length in 0...300 {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            #expect(Base64.decoded(Base64.encoded(bytes)) == bytes)
            #expect(Base64.urlDecoded(Base64.urlEncoded(bytes)) == bytes)
        }
    }

    @Test("appends the URL encoding after what a buffer holds, as encoding it alone would, for every length up to 64")
    func appendsInPlace() {
        var generator = SplitMix64(seed: 65)
        for length in 0...64 {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            var buffer = Array("head.".utf8)
            bytes.withUnsafeBytes { Base64.appendURLEncoded($0, to: &buffer) }
            #expect(String(decoding: buffer, as: UTF8.self) == "head." + Base64.urlEncoded(bytes))
        }
    }

    @Test("decodes URL text read in place as it decodes the same text as a string, refusals included")
    func decodesInPlace() {
        for text in ["", "Zg", "Zm9vYmFy", "-_-_", "Zm9vYg==", "Z", "Zh", "+/+/", "Zg=a", "=="] {
            let inPlace = Array(text.utf8).withUnsafeBufferPointer { Base64.urlDecoded($0) }
            #expect(inPlace == Base64.urlDecoded(text), "\(text)")
        }
        // A slice of a longer text, as a token's segment is read.
        let token = Array("Zm9v.YmFy.".utf8)
        #expect(token.withUnsafeBufferPointer { Base64.urlDecoded(UnsafeBufferPointer(rebasing: $0[5..<9])) } == Array("bar".utf8))
    }
}
