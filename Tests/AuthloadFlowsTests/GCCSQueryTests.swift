import AuthloadCore
import AuthloadWire
import Testing

@testable import AuthloadStaging

@Suite("GCCS service: the query of a request target")
struct GCCSQueryTests {
    @Test("finds the query as the first '?' among the target's characters does, ASCII or not")
    func agreesWithCharacters() {
        let pieces = ["a", "Z", "0", "=", "&", "?", "%3F", "%", "+", "/", " ", "é", "\u{301}", "\u{200D}", "€", "\r\n"]
        var random = SplitMix64(seed: 37)
        var withQuery = 0
        for _ in 0..<2_000 {
            let target = (0..<Int(random.next() % 12)).map { _ in pieces[Int(random.next() % UInt64(pieces.count))] }.joined()
            let expected = target.firstIndex(of: "?").map { FormURLEncoding.decode(target[target.index(after: $0)...]) }
            let found = GCCSService.queryPairs(of: target)
            #expect(found?.map { [$0.0, $0.1] } == expected?.map { [$0.0, $0.1] }, "\(Array(target.utf8))")
            if expected != nil { withQuery += 1 }
        }
        #expect(withQuery > 300, "many draws have a query")
        // A combining mark makes `?\u{301}` one character that is not `?`: the query starts at the next `?`.
        #expect(GCCSService.queryPairs(of: "/ws?\u{301}a=1?b=2")?.map { [$0.0, $0.1] } == [["b", "2"]])
        #expect(
            GCCSService.queryPairs(of: "/ws?deviceId=d%201&channelKey=k")?.map { [$0.0, $0.1] } == [
                ["deviceId", "d 1"], ["channelKey", "k"]
            ])
        #expect(GCCSService.queryPairs(of: "/ws") == nil)
    }
}
