import Testing

@testable import AuthloadWire

@Suite("STOMP version negotiation")
struct StompVersionTests {
    @Test(
        "picks the highest version both sides speak, or none",
        arguments: [
            ("1.2", StompVersion?.some(.v1_2)),
            ("1.1,1.2", .v1_2),
            ("1.2,1.1", .v1_2),
            ("1.0,1.1", .v1_1),
            ("1.1, 1.2", .v1_2),
            ("  1.1 ,1.0  ", .v1_1),
            ("1.1,\t1.2", .v1_1),
            ("1.1,1.2\n", .v1_1),
            ("1.2,3.0", .v1_2),
            ("1.0", nil),
            ("2.0", nil),
            ("", nil),
            (",,", nil),
            ("1.2x", nil)
        ])
    func negotiate(acceptVersion: String, expected: StompVersion?) {
        #expect(StompVersion.negotiate(acceptVersion: acceptVersion) == expected)
    }

    @Test("reads a missing accept-version as 1.0 only")
    func missingHeaderMeansOneZero() {
        #expect(StompVersion.negotiate(acceptVersion: nil) == nil)
        #expect(StompVersion.negotiate(acceptVersion: nil, supported: StompVersion.allCases) == .v1_0)
    }

    @Test("honours the versions the server supports")
    func serverSupport() {
        #expect(StompVersion.negotiate(acceptVersion: "1.0,1.1,1.2", supported: [.v1_1]) == .v1_1)
        #expect(StompVersion.negotiate(acceptVersion: "1.1", supported: [.v1_2]) == nil)
        #expect(StompVersion.negotiate(acceptVersion: "1.0", supported: StompVersion.allCases) == .v1_0)
    }

    @Test("orders versions by number")
    func ordering() {
        #expect(StompVersion.allCases.sorted() == [.v1_0, .v1_1, .v1_2])
        #expect(StompVersion.v1_1 < .v1_2)
    }
}
