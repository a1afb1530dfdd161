import Testing

@testable import AuthloadWire

@Suite("GCCS enCode* fields: AES-256-CBC keyed by the channel key")
struct GCCSFieldCipherTests {
    // Known answers from the OpenSSL command line, independent of this code:
    //   printf 'device-42' | openssl enc -aes-256-cbc -K $(printf '0123456789abcdef0123456789abcdef' | xxd -p -c 64) \
    //     -iv $(printf '0123456789abcdef' | xxd -p) | base64
    //   (and the same with an empty input, and with the key 'abcFNSVALUEfnsvalueFNSVALUEfnsva' for the short channel key 'abc')
    @Test(
        "matches OpenSSL's own output",
        arguments: [
            ("0123456789abcdef0123456789abcdef", "device-42", "d5LnRQMlrKvvIANg+yI3yw=="),
            ("0123456789abcdef0123456789abcdef", "", "OK6Do+3SKnHs8pZTnd9zIA=="),
            ("abc", "block-key-1", "hZw6r5eBNoyBPaIiUew+Uw=="),
            ("0123456789abcdef0123456789abcdefTAIL", "device-42", "d5LnRQMlrKvvIANg+yI3yw==")
        ])
    func knownAnswers(channelKey: String, value: String, expected: String) {
        #expect(GCCSFieldCipher.encrypt(value, channelKey: channelKey) == expected)
        #expect(GCCSFieldCipher.decrypt(expected, channelKey: channelKey) == value)
    }

    @Test("a short channel key is filled with the SDK's pattern; the IV is the key's first 16 bytes")
    func keyDerivation() {
        let (key, iv) = GCCSFieldCipher.keyAndIV(channelKey: "abc")
        #expect(String(decoding: key, as: UTF8.self) == "abcFNSVALUEfnsvalueFNSVALUEfnsva")
        #expect(String(decoding: iv, as: UTF8.self) == "abcFNSVALUEfnsva")
    }

    @Test(
        "a field under another key, plain base64, or not base64 at all does not decrypt to the value",
        arguments: [
            GCCSFieldCipher.encrypt("device-42", channelKey: "another-channel-key-0123456789ab"),
            Base64.encoded(Array("device-42".utf8)),
            "not base64 %%%",
            ""
        ])
    func refusals(field: String) {
        #expect(GCCSFieldCipher.decrypt(field, channelKey: "0123456789abcdef0123456789abcdef") != "device-42")
    }

    @Test("a cipher keyed once seals and opens each of many fields as the one-shot functions do")
    func keyedOnceMatchesOneShot() {
        var random = SystemRandomNumberGenerator()
        let alphabet = Array("abcdef0123456789-_:/é€".unicodeScalars)
        func text(upTo length: Int) -> String {
            String(
                String.UnicodeScalarView(
                    (0..<Int.random(in: 0...length, using: &random)).map { _ in alphabet.randomElement(using: &random)! }))
        }
        for _ in 0..<200 {
            let channelKey = text(upTo: 40)
            let values = (0..<Int.random(in: 1...5, using: &random)).map { _ in text(upTo: 40) }
            let sealer = GCCSFieldCipher.Keyed(channelKey: channelKey, encrypting: true)
            let fields = values.map { sealer.encrypt($0) }
            #expect(fields == values.map { GCCSFieldCipher.encrypt($0, channelKey: channelKey) })
            let opener = GCCSFieldCipher.Keyed(channelKey: channelKey, encrypting: false)
            // A field that fails (under another key, or cut short) leaves the next one to open as it would alone.
            let foreign = GCCSFieldCipher.encrypt(values[0], channelKey: channelKey + "x")
            let mixed = fields.flatMap { [foreign, String($0.dropLast(4)), $0] }
            #expect(mixed.map { opener.decrypt($0) } == mixed.map { GCCSFieldCipher.decrypt($0, channelKey: channelKey) })
            #expect(fields.map { opener.decrypt($0) } == values)
        }
    }
}
