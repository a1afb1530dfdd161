import AuthloadCore
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

    @Test("the first value of a name is found as in the decoded pairs, on random forms of escapes, pluses and repeats")
    func firstValueMatchesDecode() {
        var random = AuthloadCore.SplitMix64(seed: 41)
        let names = ["a", "client_id", "client%5Fid", "client+id", "client id", "%63lient_id", "", "caf%C3%A9", "cafe%CC%81", "x%"]
        let values = ["1", "a+b", "%41%42", "%4", "%zz", "%C3%A9", "", "=x=", "%2B"]
        let queries = ["a", "client_id", "client id", "caf\u{E9}", "cafe\u{301}", "x%", "", "missing"]
        var found = 0
        for _ in 0..<1_000 {
            let pieces = (0..<Int.random(in: 0...6, using: &random)).map { _ -> String in
                let name = names[Int.random(in: 0..<names.count, using: &random)]
                switch Int.random(in: 0..<6, using: &random) {
                case 0: return name
                case 1: return ""
                default: return name + "=" + values[Int.random(in: 0..<values.count, using: &random)]
                }
            }
            let body = Array(pieces.joined(separator: "&").utf8)
            let pairs = FormURLEncoding.decode(body)
            for query in queries {
                let expected = pairs.first { $0.0 == query }?.1
                #expect(FormURLEncoding.firstValue(named: query, in: body) == expected, "\(query) in \(pieces)")
                if expected != nil { found += 1 }
            }
            // All at once, in one pass: each name's first value, as looked up one by one.
            let expected = queries.map { query in pairs.first { $0.0 == query }?.1 }
            #expect(FormURLEncoding.firstValues(named: queries, in: body) == expected, "\(pieces)")
        }
        #expect(found > 1_000)
    }

    @Test("appends to an existing buffer, e.g. after the '?' of a target")
    func appending() {
        var target = wire("/search?")
        FormURLEncoding.encode([("q", "a b")], into: &target)
        #expect(target == wire("/search?q=a%20b"))
    }
}
