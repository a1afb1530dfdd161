import AuthloadCore
import Testing

@testable import AuthloadWire

@Suite("Percent encoding")
struct PercentEncodingTests {
    @Test(
        "encodes everything outside the unreserved set, for path segments and query values alike",
        arguments: [
            ("plain-Value_1.0~", "plain-Value_1.0~"),
            ("a/b", "a%2Fb"),
            ("a b+c", "a%20b%2Bc"),
            ("?#[]@!$&'()*,;=:", "%3F%23%5B%5D%40%21%24%26%27%28%29%2A%2C%3B%3D%3A"),
            ("100%", "100%25"),
            ("é", "%C3%A9"),
            ("", "")
        ])
    func encoding(text: String, expected: String) {
        #expect(PercentEncoding.encode(text) == expected)
        #expect(PercentEncoding.decode(expected) == text)
    }

    @Test("runs of safe bytes between escapes, of a string or a substring, encode as byte by byte")
    func runs() {
        var random = SplitMix64(seed: 33)
        let pieces = ["a", "Z9", "-._~", "plain-run-of-bytes", " ", "/", "%", "é", "😀", "&=", "+"]
        for _ in 0..<300 {
            let text = (0..<Int.random(in: 0...8, using: &random)).map { _ in pieces.randomElement(using: &random)! }.joined()
            let expected = text.utf8.map { byte in
                ASCII.isUnreserved(byte) ? String(UnicodeScalar(byte)) : "%" + String(byte, radix: 16, uppercase: true).leftPadded()
            }.joined()
            #expect(PercentEncoding.encode(text) == expected)
            #expect(PercentEncoding.encode(("<" + text + ">").dropFirst().dropLast()) == expected)
            #expect(FormURLEncoding.encodedString([(text, text)]) == expected + "=" + expected)
        }
    }

    @Test("keeps plus as plus unless asked to read it as a space")
    func plus() {
        #expect(PercentEncoding.decode("a+b%20c") == "a+b c")
        #expect(PercentEncoding.decode("a+b%20c", plusAsSpace: true) == "a b c")
    }

    @Test(
        "leaves malformed escapes as they are and replaces bytes that are not UTF-8",
        arguments: [
            ("%", "%"), ("%4", "%4"), ("%G0", "%G0"), ("a%%41", "a%A"), ("%e9", "\u{FFFD}")
        ])
    func malformed(text: String, expected: String) {
        #expect(PercentEncoding.decode(text) == expected)
    }

    @Test("writes a target with its query as joining the encoded pairs does, whatever the pairs hold")
    func targetAgrees() {
        let pieces = ["a", "Z", "0", "-", "_", ".", "~", " ", "&", "=", "?", "%", "/", "+", "é", "€", "\u{0}"]
        var random = SplitMix64(seed: 36)
        func text() -> String { (0..<Int(random.next() % 8)).map { _ in pieces[Int(random.next() % UInt64(pieces.count))] }.joined() }
        for _ in 0..<1_000 {
            let path = text()
            let pairs = (0..<Int(random.next() % 5)).map { _ in (name: text(), value: text()) }
            let joined = "\(path)?" + pairs.map { "\($0)=\(PercentEncoding.encode($1))" }.joined(separator: "&")
            #expect(PercentEncoding.target(path, query: pairs) == joined)
        }
        #expect(PercentEncoding.target("/auth", query: [("deviceId", "d 1"), ("clientKey", "k")]) == "/auth?deviceId=d%201&clientKey=k")
    }
}

extension String {
    fileprivate func leftPadded() -> String { count < 2 ? "0" + self : self }
}
