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
}
