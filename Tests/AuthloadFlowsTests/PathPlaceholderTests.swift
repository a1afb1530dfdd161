import Testing

@testable import AuthloadFlows

@Suite("A path template's placeholders filled")
struct PathPlaceholderTests {
    @Test(
        "every placeholder is replaced, as replacing(_:with:) does",
        arguments: [
            ("/v1/invitations/{code}/redeem", "{code}", "123456789"),
            ("{code}", "{code}", "x"),
            ("{code}/a/{code}", "{code}", "é%20"),
            ("/v1/companies/{company}/openid-configuration", "{company}", ""),
            ("/no/placeholder", "{code}", "1"),
            ("/a/{cod", "{code}", "1"),
            ("{{code}}", "{code}", "{code}"),
            ("", "{code}", "1"),
            ("/ü/{sessionid}", "{sessionid}", "abc")
        ])
    func fills(template: String, placeholder: String, value: String) {
        #expect(template.filling(placeholder, with: value) == template.replacing(placeholder, with: value))
    }
}
