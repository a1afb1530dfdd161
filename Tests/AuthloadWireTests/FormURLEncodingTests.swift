import Testing

@testable import AuthloadWire

@Suite("Form URL encoding")
struct FormURLEncodingTests {
    @Test(
        "encodes pairs in order, leaving only the unreserved set as is",
        arguments: [
            ([("a", "1"), ("b", "2")], "a=1&b=2"),
            ([("user name", "ana@example.com")], "user%20name=ana%40example.com"),
            ([("q", "a+b=c&d/e?f#g%h")], "q=a%2Bb%3Dc%26d%2Fe%3Ff%23g%25h"),
            ([("safe", "AZaz09-._~")], "safe=AZaz09-._~"),
            ([("city", "Zürich"), ("emoji", "🔑")], "city=Z%C3%BCrich&emoji=%F0%9F%94%91"),
            ([("empty", ""), ("", "x"), ("dup", "1"), ("dup", "2")], "empty=&=x&dup=1&dup=2"),
            ([], "")
        ] as [([(String, String)], String)])
    func encoding(pairs: [(String, String)], expected: String) {
        #expect(FormURLEncoding.encode(pairs) == wire(expected))
        #expect(FormURLEncoding.encodedString(pairs) == expected)
    }

    @Test(
        "decodes plus as space, escapes of either case, bare names and empty pieces",
        arguments: [
            ("a=1&b=2", [("a", "1"), ("b", "2")]),
            ("q=hello+world%21", [("q", "hello world!")]),
            ("q=%2b%2B", [("q", "++")]),
            ("flag&x=", [("flag", ""), ("x", "")]),
            ("&&a=1&&", [("a", "1")]),
            ("eq=a=b", [("eq", "a=b")]),
            ("bad=%zz%4&pct=%", [("bad", "%zz%4"), ("pct", "%")]),
            ("utf=%C3%A9%E2%82%AC", [("utf", "é€")]),
            ("invalid=%FF", [("invalid", "\u{FFFD}")]),
            ("", [])
        ] as [(String, [(String, String)])])
    func decoding(text: String, expected: [(String, String)]) {
        let decoded = FormURLEncoding.decode(wire(text))
        #expect(decoded.map(\.0) == expected.map(\.0))
        #expect(decoded.map(\.1) == expected.map(\.1))
        #expect(FormURLEncoding.decode(text).map(\.1) == expected.map(\.1), "the query-string overload agrees")
    }

    @Test(
        "round-trips reserved characters and UTF-8",
        arguments: [
            [("username", "ana+test@example.com"), ("password", "p@ss w0rd!&=%;/?#[]")],
            [("name", "日本語"), ("greeting", "héllo wörld 👋🏽"), ("tab", "a\tb\nc")],
            [("", ""), ("=", "&"), ("+", " ")]
        ] as [[(String, String)]])
    func roundTrip(pairs: [(String, String)]) {
        let decoded = FormURLEncoding.decode(FormURLEncoding.encode(pairs))
        #expect(decoded.map(\.0) == pairs.map(\.0))
        #expect(decoded.map(\.1) == pairs.map(\.1))
    }

    @Test("appends to an existing buffer, e.g. after the '?' of a target")
    func appending() {
        var target = wire("/search?")
        FormURLEncoding.encode([("q", "a b")], into: &target)
        #expect(target == wire("/search?q=a%20b"))
    }
}
