import AuthloadCore
import Testing

@testable import AuthloadWire

/// Requests as HTTP/2 header lists and header lists as responses (RFC 9113 §8.3).
@Suite struct HTTP2MessageTests {
    @Test("a request becomes pseudo-fields first, then its fields lowercased, without those of an HTTP/1.1 connection")
    func requestFields() {
        let request = HTTPRequest(
            method: "POST", target: "/login?next=%2F",
            headers: [
                "Content-Type": "application/json", "Connection": "keep-alive", "Transfer-Encoding": "chunked", "TE": "gzip",
                "Authorization": "Bearer t", "Content-Length": "99"
            ],
            body: Array("{}".utf8))
        let fields = request.http2Fields(authority: "auth.example.com", scheme: "https")
        #expect(
            fields.map { "\($0.name): \($0.value)" } == [
                ":method: POST", ":scheme: https", ":authority: auth.example.com", ":path: /login?next=%2F",
                "content-type: application/json", "authorization: Bearer t", "content-length: 2"
            ])
        #expect(fields.last?.indexing == .withoutIndexing, "a length that changes per request stays out of the HPACK table")
    }

    @Test("a Host field becomes the :authority; a GET without a body carries no content-length")
    func hostAndLength() {
        let fields = HTTPRequest(method: "GET", target: "", headers: ["Host": "other.example"]).http2Fields(authority: "a", scheme: "http")
        #expect(fields.map(\.value) == ["GET", "http", "other.example", "/"])
    }

    @Test("a header list with :status first is a response carried by HTTP/2")
    func response() throws {
        let response = try HTTPResponse(http2Fields: [
            HPACKHeader(":status", "201"), HPACKHeader("set-cookie", "a=1"), HPACKHeader("set-cookie", "b=2")
        ])
        #expect(response.status == 201 && response.version == .http2)
        #expect(response.headers.values(of: "set-cookie") == ["a=1", "b=2"])
    }

    @Test(
        "a header list that is no response head is refused",
        arguments: [
            ([HPACKHeader("content-type", "x")], HTTP2ResponseProblem.missingStatus),
            ([HPACKHeader(":status", "2000")], .missingStatus),
            ([HPACKHeader(":status", "abc")], .missingStatus),
            ([HPACKHeader("x", "y"), HPACKHeader(":status", "200")], .misplacedPseudoField(":status")),
            ([HPACKHeader(":status", "200"), HPACKHeader(":path", "/")], .misplacedPseudoField(":path"))
        ])
    func malformed(fields: [HPACKHeader], problem: HTTP2ResponseProblem) {
        #expect(throws: problem) { try HTTPResponse(http2Fields: fields) }
    }
}
