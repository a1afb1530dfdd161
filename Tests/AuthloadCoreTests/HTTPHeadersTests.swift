import AuthloadCore
import Testing

@Suite("HTTP header fields kept as bytes")
struct HTTPHeadersTests {
    /// Builds headers the way the parser does: the section as it arrived, `name: value` lines, and where each field lies.
    private func appended(_ fields: [([UInt8], [UInt8])]) -> HTTPHeaders {
        var section: [UInt8] = []
        var spans: [HTTPHeaders.Span] = []
        for (name, value) in fields {
            if !section.isEmpty { section += Array("\r\n".utf8) }
            let nameStart = section.count
            section += name
            let nameEnd = section.count
            section += Array(": ".utf8)
            let valueStart = section.count
            section += value
            spans.append(HTTPHeaders.Span(name: nameStart..<nameEnd, value: valueStart..<section.count))
        }
        return HTTPHeaders(section: section, fields: spans)
    }

    private func appended(_ fields: KeyValuePairs<String, String>) -> HTTPHeaders {
        appended(fields.map { (Array($0.key.utf8), Array($0.value.utf8)) })
    }

    // MARK: Reading

    @Test("a look-up ignores the name's case and answers with the first value")
    func lookup() {
        let headers = appended(["Content-Type": "text/html", "X-Trace": "1", "content-type": "application/json"])
        #expect(headers["content-type"] == "text/html")
        #expect(headers["CONTENT-TYPE"] == "text/html")
        #expect(headers["X-TRACE"] == "1")
        #expect(headers["Content-Typ"] == nil)
        #expect(headers["Content-Type-"] == nil)
        #expect(headers.contains("x-trace"))
        #expect(!headers.contains("x-trac"))
    }

    @Test("the first value's bytes are lent as the look-up by name finds it, from added and parsed fields alike")
    func firstValueBytes() {
        var added: HTTPHeaders = ["Accept": "a", "authorization": "Bearer t1", "Authorization": "Bearer t2"]
        added.add("X-Empty", "")
        let parsed = appended([(Array("AUTHORIZATION".utf8), Array("Bearer \u{E9}".utf8)), (Array("Accept".utf8), [0xFF])])
        for (headers, name) in [
            (added, "AUTHORIZATION"), (added, "accept"), (added, "x-empty"), (added, "missing"),
            (parsed, "authorization"), (parsed, "Accept")
        ] {
            let bytes = headers.withFirstValue(of: name) { $0.map(Array.init) }
            #expect(bytes.map { String(decoding: $0, as: UTF8.self) } == headers[name], "\(name)")
        }
        #expect(parsed.withFirstValue(of: "accept") { $0.map(Array.init) } == [0xFF], "the bytes as sent, not decoded")
    }

    @Test("case folding covers ASCII letters only, not the bytes one bit away from them")
    func asciiFoldingOnly() {
        let headers: HTTPHeaders = ["X@": "at", "X[": "bracket"]
        #expect(headers["x@"] == "at")
        #expect(headers["x`"] == nil)
        #expect(headers["x{"] == nil)
    }

    @Test("every Set-Cookie comes back, in the order sent")
    func valuesInOrder() {
        let headers = appended(["Set-Cookie": "a=1", "Content-Length": "0", "set-cookie": "b=2", "SET-COOKIE": "c=3"])
        #expect(headers.values(of: "Set-Cookie") == ["a=1", "b=2", "c=3"])
        #expect(headers.values(of: "Cookie") == [])
    }

    @Test("iteration gives the fields in wire order, names' case as sent")
    func iterationOrder() {
        let headers = appended(["Server": "nginx", "date": "today", "Content-Length": "5", "Server": "again"])
        let expected = [
            HTTPField("Server", "nginx"), HTTPField("date", "today"), HTTPField("Content-Length", "5"), HTTPField("Server", "again")
        ]
        #expect(Array(headers) == expected)
        #expect(headers.fields == expected)
        #expect(headers.count == 4)
        var names: [String] = []
        headers.forEachField { name, _ in names.append(String(decoding: name, as: UTF8.self)) }
        #expect(names == ["Server", "date", "Content-Length", "Server"])
    }

    @Test("bytes 0x80 to 0xFF in a value decode with replacements exactly as String(decoding:) does")
    func obsText() {
        let value: [UInt8] = Array("a".utf8) + [0x80, 0xC3, 0xA9, 0xC3, 0xFF, 0xE2, 0x82] + Array("z".utf8) + Array(0x80...0xFF)
        let headers = appended([(Array("X-Odd".utf8), value)])
        let expected = String(decoding: value, as: UTF8.self)
        #expect(expected.unicodeScalars.contains("\u{FFFD}"))
        #expect(headers["x-odd"] == expected)
        #expect(headers.values(of: "X-Odd") == [expected])
        #expect(headers.fields == [HTTPField("X-Odd", expected)])
        var raw: [UInt8] = []
        headers.forEachField { _, value in raw = Array(value) }
        #expect(raw == value)
    }

    // MARK: Changing

    @Test("set replaces every field of that name with one at the end; remove drops them all")
    func setAndRemove() {
        var headers = appended(["Accept": "*/*", "Cookie": "a=1", "Host": "h", "cookie": "b=2"])
        headers.set("COOKIE", "c=3")
        #expect(headers.fields == [HTTPField("Accept", "*/*"), HTTPField("Host", "h"), HTTPField("COOKIE", "c=3")])
        headers.remove("accept")
        headers.remove("Missing")
        #expect(headers.fields == [HTTPField("Host", "h"), HTTPField("COOKIE", "c=3")])
        headers.add("Accept", "text/plain")
        #expect(headers == ["Host": "h", "COOKIE": "c=3", "Accept": "text/plain"])
        headers.remove("host")
        headers.remove("cookie")
        headers.remove("accept")
        #expect(headers.isEmpty)
        #expect(headers == HTTPHeaders())
    }

    // MARK: Equality

    @Test("headers from a literal and from appended bytes are equal and hash equal when their fields are")
    func equalAcrossConstruction() {
        let literal: HTTPHeaders = ["Host": "example.com", "Set-Cookie": "a=1", "Set-Cookie": "b=2"]
        let parsed = appended(["Host": "example.com", "Set-Cookie": "a=1", "Set-Cookie": "b=2"])
        let fromFields = HTTPHeaders([HTTPField("Host", "example.com"), HTTPField("Set-Cookie", "a=1"), HTTPField("Set-Cookie", "b=2")])
        #expect(literal == parsed)
        #expect(literal.hashValue == parsed.hashValue)
        #expect(fromFields == parsed)
        #expect(Set([literal, parsed, fromFields]).count == 1)

        // Removing leaves the same fields laid out anew; they still compare by field.
        var edited = appended(["X-Drop": "1", "Host": "example.com", "Set-Cookie": "a=1", "Set-Cookie": "b=2"])
        edited.remove("x-drop")
        #expect(edited == literal)
        #expect(edited.hashValue == literal.hashValue)
    }

    @Test(
        "headers differ when a name's case, the fields' order, or where a name ends differs",
        arguments: [
            (["Host": "h", "Accept": "*/*"], ["host": "h", "Accept": "*/*"]),
            (["Host": "h", "Accept": "*/*"], ["Accept": "*/*", "Host": "h"]),
            (["Host": "h", "Accept": "*/*"], ["Host": "h"]),
            (["ab": "c"], ["a": "bc"]),
            (["A": "x"], ["A": "X"])
        ] as [(KeyValuePairs<String, String>, KeyValuePairs<String, String>)])
    func unequal(one: KeyValuePairs<String, String>, other: KeyValuePairs<String, String>) {
        let literal = HTTPHeaders(one.map { HTTPField($0.key, $0.value) })
        #expect(literal != appended(other))
        #expect(appended(one) != appended(other))
    }

    @Test("a parsed section, separators and line ends kept, reads, compares and edits like fields added one by one")
    func section() {
        let section = Array("Server: nginx\r\nX-Empty:\r\nSet-Cookie:  a=1 \r\nset-cookie: b=2".utf8)
        let headers = HTTPHeaders(
            section: section,
            fields: [
                .init(name: 0..<6, value: 8..<13), .init(name: 15..<22, value: 23..<23), .init(name: 25..<35, value: 38..<41),
                .init(name: 44..<54, value: 56..<59)
            ])
        let added: HTTPHeaders = ["Server": "nginx", "X-Empty": "", "Set-Cookie": "a=1", "set-cookie": "b=2"]
        #expect(headers.fields == added.fields)
        #expect(headers["x-empty"] == "")
        #expect(headers.values(of: "SET-COOKIE") == ["a=1", "b=2"])
        #expect(headers == added)
        #expect(headers.hashValue == added.hashValue)
        var names: [String] = []
        headers.forEachField { name, value in
            names.append(String(decoding: name, as: UTF8.self) + "=" + String(decoding: value, as: UTF8.self))
        }
        #expect(names == ["Server=nginx", "X-Empty=", "Set-Cookie=a=1", "set-cookie=b=2"])

        var edited = headers
        edited.set("Server", "other")
        #expect(
            edited.fields == [
                HTTPField("X-Empty", ""), HTTPField("Set-Cookie", "a=1"), HTTPField("set-cookie", "b=2"), HTTPField("Server", "other")
            ])
    }

    @Test("printing shows the fields, not how they are stored")
    func description() {
        let headers: HTTPHeaders = ["Host": "h"]
        #expect(String(describing: headers) == #"HTTPHeaders(fields: [AuthloadCore.HTTPField(name: "Host", value: "h")])"#)
        let request = String(describing: HTTPRequest(method: "GET", target: "/", headers: headers))
        #expect(request.contains(#"headers: AuthloadCore.HTTPHeaders(fields: [AuthloadCore.HTTPField(name: "Host", value: "h")])"#))
    }
}
