import AuthloadCore
import Testing

@Suite("Cookie jar")
struct CookieJarTests {
    private static func jar(_ setCookies: [String]) -> CookieJar {
        var headers = HTTPHeaders()
        for value in setCookies { headers.add("Set-Cookie", value) }
        var jar = CookieJar()
        jar.store(from: headers)
        return jar
    }

    @Test(
        "a Set-Cookie's name and value are what comes before its first ;, split at the first =, without spaces around them",
        arguments: [
            ("JSESSIONID=abc123; Path=/; HttpOnly", "JSESSIONID", "abc123"), (" a = 1 ;x=2", "a", "1"), ("a==b", "a", "=b"),
            ("\ta\u{0B}=\u{0C}v\r", "a", "v"), ("a=", "a", ""), ("a=b=c; d=e", "a", "b=c"), ("é = ü ", "é", "ü"),
            ("a\u{A0}=\u{A0}v\u{A0}", "a", "v")
        ])
    func nameAndValue(header: String, name: String, value: String) {
        let jar = Self.jar([header])
        #expect(jar.count == 1)
        #expect(jar.value(of: name) == value)
    }

    @Test("a Set-Cookie without = or without a name is ignored", arguments: ["novalue", " =v", "; a=b", ""])
    func ignored(header: String) {
        #expect(Self.jar([header]).isEmpty)
    }

    @Test("a cookie set again replaces the old one and moves last; the Cookie header lists them in order")
    func replaced() {
        let jar = Self.jar(["a=1", "b=2", "a=3"])
        #expect(jar.header == "b=2; a=3")
    }

    @Test("ASCII headers read as bytes give what reading them by Character gives, for every mix of the separators")
    func asciiMatchesCharacters() {
        var random = SplitMix64(seed: 42)
        let alphabet = Array("ab =;\t\u{0B}\r\n,x")
        for _ in 0..<2_000 {
            let length = Int(random.next() % 12)
            let header = String((0..<length).map { _ in alphabet[Int(random.next() % UInt64(alphabet.count))] })
            let jar = Self.jar([header])
            let expected = Self.byCharacters(header)
            #expect(jar.count == (expected == nil ? 0 : 1), "\(header.debugDescription)")
            if let expected { #expect(jar.value(of: expected.name) == expected.value, "\(header.debugDescription)") }
        }
    }

    /// The reading by `Character` the jar makes of a header that is not ASCII.
    private static func byCharacters(_ header: String) -> (name: String, value: String)? {
        let pair = header.prefix { $0 != ";" }
        guard let equals = pair.firstIndex(of: "=") else { return nil }
        let trim = { (text: Substring) -> String in
            let start = text.firstIndex { !$0.isWhitespace } ?? text.endIndex
            let end = text.lastIndex { !$0.isWhitespace }.map { text.index(after: $0) } ?? start
            return String(text[start..<end])
        }
        let name = trim(pair[..<equals])
        return name.isEmpty ? nil : (name, trim(pair[pair.index(after: equals)...]))
    }
}
