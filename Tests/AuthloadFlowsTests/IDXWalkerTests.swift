import AuthloadCore
import AuthloadWire
import Testing

@testable import AuthloadFlows

/// The walker decides on fixtures of the shapes real orgs send; no socket, no clock.
@Suite("IDX walker: each step decided from the server's answer alone")
struct IDXWalkerTests {
    typealias F = IDXFixtures

    static let answers = IDXWalker.Answers(
        username: "ana@example.com", password: "pw-1", passcode: "123456", securityAnswer: "broccoli", phoneNumber: "+15555550100")

    func walker(_ factors: [OktaIDXFlow.Factor] = [.email], answers: IDXWalker.Answers = Self.answers) -> IDXWalker {
        IDXWalker(factors: factors, answers: answers)
    }

    /// The submitted step, body and href path, or nil when the decision is not a submit.
    func submitted(_ decision: IDXWalker.Decision) -> (step: String, body: JSONValue, path: String)? {
        guard case .submit(let remediation, let step, let bytes) = decision else { return nil }
        // What is sent is a body serialized compactly, as the serializer writes it.
        let body = try? JSONValue.parse(bytes)
        #expect(body.map { $0.serialized() } == bytes)
        return body.map { (step.rawValue, $0, remediation.targetPath) }
    }

    @Test("identify sends the identifier, and the password only when the form asks for it")
    func identify() throws {
        var plain = walker()
        let first = try #require(submitted(plain.next(after: F.identify)))
        #expect(first.step == "identify" && first.path == "/idp/idx/identify")
        #expect(first.body == ["identifier": "ana@example.com", "stateHandle": .string(F.handle)])
        var single = walker()
        let both = try #require(submitted(single.next(after: F.identifyWithPassword)))
        #expect(both.body["credentials"] == ["passcode": "pw-1"])
    }

    @Test("the password is picked first when an org offers it among the factors, then the preferred factor")
    func passwordFirst() throws {
        var walker = walker([.sms, .email])
        _ = walker.next(after: F.identify)
        let offered = F.select(F.emailOption, F.passwordOption, F.phoneOption)
        let first = try #require(submitted(walker.next(after: offered)))
        #expect(first.step == "select-authenticator")
        #expect(first.body["authenticator"] == ["id": "aut-password", "methodType": "password"])
        let password = try #require(submitted(walker.next(after: F.passwordChallenge)))
        #expect(password.step == "challenge-password" && password.body["credentials"] == ["passcode": "pw-1"])
        // Offered again after the password, the password is not picked twice: the phone (SMS first) is.
        let second = try #require(submitted(walker.next(after: F.select(F.emailOption, F.passwordOption, F.phoneOption))))
        #expect(second.body["authenticator"] == ["id": "aut-phone", "enrollmentId": "pae1"])
    }

    @Test(
        "the phone's method is chosen at verification-data from the preference list, and names the challenge step",
        arguments: [([OktaIDXFlow.Factor.sms], "sms", "challenge-sms"), ([.voice, .sms], "voice", "challenge-voice")])
    func phoneMethod(factors: [OktaIDXFlow.Factor], method: String, step: String) throws {
        var walker = walker(factors)
        _ = walker.next(after: F.passwordChallenge)
        let select = try #require(submitted(walker.next(after: F.select(F.emailOption, F.phoneOption))))
        #expect(select.body["authenticator"]?["id"] == "aut-phone", "matched through relatesTo: the option names no method")
        let data = try #require(submitted(walker.next(after: F.phoneVerificationData)))
        #expect(data.step == "verification-data")
        #expect(data.body["authenticator"] == ["id": "aut-phone", "methodType": .string(method), "enrollmentId": "pae1"])
        let code = try #require(submitted(walker.next(after: F.phoneChallenge)))
        #expect(code.step == step && code.body["credentials"] == ["passcode": "123456"])
    }

    @Test("the password asked for after the code is answered with the password")
    func passwordAfterFactor() throws {
        var walker = walker([.email])
        let select = try #require(submitted(walker.next(after: F.select(F.emailOption, F.phoneOption))))
        #expect(select.body["authenticator"] == ["id": "aut-email", "methodType": "email"])
        #expect(try #require(submitted(walker.next(after: F.emailChallenge))).step == "challenge-email")
        let password = try #require(submitted(walker.next(after: F.passwordChallenge)))
        #expect(password.step == "challenge-password" && password.body["credentials"] == ["passcode": "pw-1"])
        #expect(walker.next(after: F.success) == .exchange(try #require(F.success.success)))
    }

    @Test("a security question is answered from the user's data, or fails naming what is missing")
    func securityQuestion() throws {
        var walker = walker()
        let answer = try #require(submitted(walker.next(after: F.questionChallenge)))
        #expect(answer.step == "challenge-question")
        #expect(answer.body["credentials"] == ["questionKey": "disliked_food", "answer": "broccoli"])
        var none = Self.answers
        none.securityAnswer = nil
        var without = self.walker(answers: none)
        #expect(
            without.next(after: F.questionChallenge)
                == .fail(Outcome(.protocolError, "security question asked: the user data has no securityAnswer")))
    }

    @Test("Okta Verify push is polled at the server's refresh with the poll form's own values")
    func pushPoll() throws {
        var walker = walker([.push])
        let select = try #require(submitted(walker.next(after: F.select(F.okVerifyOption, F.emailOption))))
        #expect(select.body["authenticator"] == ["id": "aut-ov", "methodType": "push"])
        guard case .poll(let remediation, let wait, let bytes) = walker.next(after: F.pushPoll) else {
            Issue.record("expected a poll")
            return
        }
        #expect(remediation.targetPath == "/idp/idx/authenticators/poll")
        #expect(wait == .seconds(4))
        let body = try JSONValue.parse(bytes)
        #expect(body == ["autoChallenge": true, "stateHandle": .string(F.handle)])
        #expect(bytes == body.serialized())
        // Polls repeat by design: the tenth is still a poll, not a loop.
        for _ in 0..<10 { _ = walker.next(after: F.pushPoll) }
        guard case .poll = walker.next(after: F.pushPoll) else {
            Issue.record("polling must not count as a loop")
            return
        }
    }

    @Test("TOTP is picked from Okta Verify's methods and answered with the passcode")
    func totp() throws {
        var walker = walker([.totp])
        let select = try #require(submitted(walker.next(after: F.select(F.okVerifyOption))))
        #expect(select.body["authenticator"] == ["id": "aut-ov", "methodType": "totp"])
    }

    @Test("optional enrollment is skipped; enrolling a profile fails as user not enrolled")
    func enrollment() throws {
        var walker = walker()
        let skip = try #require(submitted(walker.next(after: F.optionalEnrollment)))
        #expect(skip.step == "skip" && skip.path == "/idp/idx/skip")
        #expect(walker.next(after: F.enrollProfile) == .fail(Outcome(.protocolError, "user not enrolled")))
    }

    @Test("no factor of the profile's on offer fails naming the remediation and what it offered")
    func nothingUsable() {
        var walker = walker([.sms], answers: IDXWalker.Answers(username: "u", password: "", passcode: "1"))
        #expect(
            walker.next(after: F.select(F.emailOption, F.questionOption))
                == .fail(
                    Outcome(
                        .protocolError, "cannot proceed at remediation select-authenticator-authenticate; offered: email, security_question"
                    )))
    }

    @Test("an unknown remediation fails naming it and every remediation offered")
    func unknownRemediation() {
        var walker = walker()
        let unknown = F.state(F.remediations(F.remediation("redirect-idp", path: "/sso/idps/1", fields: ""), F.cancel))
        #expect(
            walker.next(after: unknown)
                == .fail(Outcome(.protocolError, "cannot proceed at remediation redirect-idp; offered: redirect-idp, cancel")))
    }

    @Test("the same remediation answered the same way over and over is a loop, not a spin")
    func loop() throws {
        var walker = walker()
        for _ in 0..<IDXWalker.maxRepeats {
            #expect(submitted(walker.next(after: F.passwordChallenge)) != nil)
        }
        #expect(walker.next(after: F.passwordChallenge) == .fail(Outcome(.protocolError, "loop at challenge-authenticator")))
    }

    @Test("a top-level ERROR ends the walk with its key")
    func topError() {
        var walker = walker()
        #expect(walker.next(after: F.topError) == .fail(Outcome(.authFailure, "errors.E0000004")))
    }

    @Test("a form missing a value the user has not got names the field")
    func missingValue() {
        let enrollmentData = F.state(
            F.remediations(
                F.remediation(
                    "authenticator-enrollment-data", path: "/idp/idx/challenge",
                    fields: #"{"name": "authenticator", "form": {"value": [{"name": "id", "required": true, "value": "aut-phone"}, "#
                        + #"{"name": "methodType", "options": [{"label": "SMS", "value": "sms"}]}, {"name": "phoneNumber", "required": true}]}}"#
                )))
        var none = Self.answers
        none.phoneNumber = nil
        var walker = walker([.sms], answers: none)
        #expect(
            walker.next(after: enrollmentData)
                == .fail(
                    Outcome(
                        .protocolError, "cannot answer remediation authenticator-enrollment-data: no value for authenticator.phoneNumber")))
        var withPhone = self.walker([.sms])
        let filled = submitted(withPhone.next(after: enrollmentData))
        #expect(filled?.body["authenticator"] == ["id": "aut-phone", "methodType": "sms", "phoneNumber": "+15555550100"])
    }
}
