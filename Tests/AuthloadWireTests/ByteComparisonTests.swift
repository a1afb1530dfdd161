import Testing

@testable import AuthloadWire

@Suite struct ByteComparisonTests {
    @Test(
        "compares bytes with a string's UTF-8 by length and content",
        arguments: [
            ([UInt8]("v1".utf8), "v1", true), ([UInt8]("v1".utf8), "v2", false), ([UInt8]("v1".utf8), "v12", false),
            ([UInt8]("openid".utf8), "open", false), ([], "", true), ([], "a", false),
            ([0xC3, 0xA9], "é", true), ([0x65, 0xCC, 0x81], "é", false)
        ])
    func utf8(bytes: [UInt8], text: String, equal: Bool) {
        bytes.withUnsafeBufferPointer { buffer in
            #expect(buffer.isUTF8(of: text) == equal)
            var text = text
            text.withUTF8 { #expect(buffer.hasSameBytes(as: $0) == equal) }
        }
    }
}
