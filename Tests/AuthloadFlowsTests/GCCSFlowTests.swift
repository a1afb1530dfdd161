import AuthloadCore
import AuthloadStaging
import AuthloadTesting
import AuthloadWire
import Testing

@testable import AuthloadFlows

/// True when `micros` is within the histogram's 3-significant-digit precision of `expected`.
func isNear(_ micros: Int?, _ expected: Duration) -> Bool {
    guard let micros else { return false }
    let target = Int(expected.microseconds)
    return abs(micros - target) <= max(1, target / 1000)
}

@Suite("GCCS flow against the staging service, in virtual time", .timeLimit(.minutes(1)))
struct GCCSFlowTests {
    let clock = ManualClock()

    /// REST answers in 10 ms; a status every 500 ms.
    func staging(_ configure: (inout GCCSService.Options) -> Void = { _ in }) -> (InProcessHost, GCCSService) {
        var configuration = StagingConfiguration()
        configuration.gccs.latency = .fixed(.milliseconds(10))
        configuration.gccs.nodeDelay = .fixed(.milliseconds(500))
        configure(&configuration.gccs)
        let server = StagingServer(configuration: configuration)
        return (InProcessHost(clock: clock, service: server), server.gccs)
    }

    func flow(_ configure: (inout GCCSAuthFlow.Options) -> Void = { _ in }) -> GCCSAuthFlow {
        var options = GCCSAuthFlow.Options()
        configure(&options)
        return GCCSAuthFlow(options: options)
    }

    @Test("a clean authentication times every status from the start and from the previous event")
    func completes() async throws {
        let (host, service) = staging()
        let result = await FlowProbe.run(flow(), name: "gccs", host: host)
        #expect(result.outcome == .ok)
        // auth 0–10 ms; connect at 10 ms (in process: instant); nodes sent at 10 ms; statuses every 500 ms from
        // there; complete 2010–2020 ms; AuthCompleted follows its answer; token 2020–2030 ms.
        #expect(result.elapsed == .milliseconds(2030))
        for (index, status) in GCCSStatus.verification.enumerated() {
            #expect(isNear(result.metric("gccs", status.rawValue)?.p50Micros, .milliseconds(510 + 500 * index)), "\(status)")
            #expect(isNear(result.metric("gccs", status.rawValue + " gap")?.p50Micros, .milliseconds(500)), "\(status) gap")
        }
        #expect(isNear(result.metric("gccs", "AuthCompleted")?.p50Micros, .milliseconds(2020)))
        #expect(isNear(result.metric("gccs", "AuthCompleted gap")?.p50Micros, .milliseconds(10)))
        for step in ["auth", "nodes", "complete", "token"] {
            #expect(isNear(result.metric("gccs", step)?.p50Micros, .milliseconds(10)), "\(step)")
        }
        #expect(result.metric("gccs", "disconnect")?.count == 1)
        #expect(result.metric("gccs", "cancel")?.count == 0)
        #expect(result.measured.errors.isEmpty)
        #expect(service.openChannels == 0, "the token was fetched and the socket closed")
        #expect(host.pendingEvents == 0)
    }

    @Test("the status queue is an option on both sides, read from the profile; a client subscribed elsewhere gets no status")
    func queueOption() async throws {
        let (host, _) = staging { $0.paths.queue = "/topic/auth-status" }
        let result = await FlowProbe.run(flow { $0.paths.queue = "/topic/auth-status" }, name: "gccs", host: host)
        #expect(result.outcome == .ok, "\(result.measured.errors)")
        let (defaultQueue, _) = staging { $0.paths.queue = "/topic/auth-status" }
        let refused = await FlowProbe.run(flow(), name: "gccs", host: defaultQueue)
        #expect(refused.outcome != .ok, "the server refuses a subscription to /user/queue")

        let reader = ProfileReader(path: "flows[0]", value: try JSONValue.parse(Array(#"{"queue": "/topic/auth-status"}"#.utf8)))
        #expect(try GCCSPaths.read(reader).queue == "/topic/auth-status")
        #expect(GCCSPaths().queue == "/user/queue")
        let bad = ProfileReader(path: "flows[0]", value: try JSONValue.parse(Array(#"{"queue": "user/queue"}"#.utf8)))
        #expect(throws: ProfileError.self) { try GCCSPaths.read(bad) }
    }

    @Test("the REST endpoints follow the API prefix, however it was set")
    func endpointsFollowPrefix() throws {
        var paths = GCCSPaths()
        #expect([paths.auth, paths.nodes, paths.complete] == ["/api/v3/auth", "/api/v3/auth/nodes", "/api/v3/auth/complete"])
        paths.apiPrefix = ""
        #expect([paths.auth, paths.nodes, paths.complete] == ["/auth", "/auth/nodes", "/auth/complete"])
        let reader = ProfileReader(path: "flows[0]", value: try JSONValue.parse(Array(#"{"apiPrefix": "/gccs/v9"}"#.utf8)))
        let read = try GCCSPaths.read(reader)
        #expect([read.auth, read.nodes, read.complete] == ["/gccs/v9/auth", "/gccs/v9/auth/nodes", "/gccs/v9/auth/complete"])
    }

    @Test("statuses the server never pushes are counted missing, statuses it repeats counted duplicate; neither fails the flow")
    func missingAndDuplicateStatuses() async throws {
        let (host, _) = staging {
            $0.skipStatuses = [.createChannel, .selectNodes]
            $0.repeatStatuses = true
        }
        let result = await FlowProbe.run(flow(), name: "gccs", host: host)
        #expect(result.outcome == .ok)
        #expect(result.measured.errors.isEmpty, "\(result.measured.errors)")
        #expect(result.metric("gccs", "missing status")?.count == 2, "CreateChannel and SelectNodes")
        #expect(result.metric("gccs", "CreateChannel")?.count == 0)
        // StartVerificationOfNodes, CompleteVerificationOfNodes and AuthCompleted each came twice.
        #expect(result.metric("gccs", "duplicate status")?.count == 3)
        #expect(isNear(result.metric("gccs", "StartVerificationOfNodes")?.p50Micros, .milliseconds(1510)))

        let (clean, _) = staging()
        let cleanRun = await FlowProbe.run(flow(), name: "gccs", host: clean)
        #expect(cleanRun.metric("gccs", "missing status")?.count == 0)
        #expect(cleanRun.metric("gccs", "duplicate status")?.count == 0)
    }

    @Test("statuses that beat the auth/nodes answer are timed from their arrival")
    func statusBeforeRestAnswer() async throws {
        let (host, _) = staging {
            $0.latency = .fixed(.milliseconds(50))
            $0.nodeDelay = .fixed(.milliseconds(20))
        }
        let result = await FlowProbe.run(flow(), name: "gccs", host: host)
        #expect(result.outcome == .ok)
        // nodes is sent at 50 ms and answered at 100 ms; CreateChannel arrives at 70 ms, SelectNodes at 90 ms.
        #expect(isNear(result.metric("gccs", "CreateChannel")?.p50Micros, .milliseconds(70)))
        #expect(isNear(result.metric("gccs", "SelectNodes gap")?.p50Micros, .milliseconds(20)))
    }

    @Test("verification that never completes ends in a local AuthTimeout exactly authTimeRemaining after auth/nodes answered")
    func authTimeout() async throws {
        let (host, service) = staging {
            $0.timeoutRate = 1
            $0.authTimeRemaining = .seconds(3)
        }
        let result = await FlowProbe.run(flow(), name: "gccs", host: host)
        #expect(result.outcome == Outcome(.timeout, "AuthTimeout"))
        #expect(result.elapsed == .milliseconds(3020))
        #expect(result.errors("gccs", "CompleteVerificationOfNodes", .timeout, "AuthTimeout") == 1)
        #expect(result.metric("gccs", "StartVerificationOfNodes")?.count == 1)
        #expect(result.metric("gccs", "disconnect")?.count == 0)
        #expect(service.openChannels == 0, "the socket closed and took the channel with it")
    }

    @Test("AuthFailed from the nodes is an auth failure")
    func authFailed() async throws {
        let (host, _) = staging { $0.failureRate = 1 }
        let result = await FlowProbe.run(flow(), name: "gccs", host: host)
        #expect(result.outcome == Outcome(.authFailure, "AuthFailed"))
        #expect(result.errors("gccs", "CompleteVerificationOfNodes", .authFailure, "AuthFailed") == 1)
    }

    @Test("a cancelling user sends DELETE /auth after SelectNodes and waits for AuthCanceled")
    func cancels() async throws {
        let (host, service) = staging()
        let result = await FlowProbe.run(flow { $0.cancelRatio = 1 }, name: "gccs", host: host)
        #expect(result.outcome == .ok)
        #expect(result.metric("gccs", "cancel")?.count == 1)
        #expect(result.metric("gccs", "AuthCanceled")?.count == 1)
        #expect(result.metric("gccs", "StartVerificationOfNodes")?.count == 0, "the stream stops at the cancel")
        #expect(result.metric("gccs", "token")?.count == 0)
        // SelectNodes at 1010 ms, cancel answered 10 ms later; AuthCanceled came at once.
        #expect(result.elapsed == .milliseconds(1020))
        #expect(service.openChannels == 0)
    }

    @Test("a cancel that loses the race to completion gets 5019 and AuthCompleted, never both ends")
    func cancelRace() async throws {
        let (host, _) = staging { $0.cancelRaceRate = 1 }
        let result = await FlowProbe.run(
            flow {
                $0.cancelRatio = 1
                $0.cancelAfter = .completeVerificationOfNodes
            }, name: "gccs", host: host)
        #expect(result.outcome == .ok)
        #expect(result.errors("gccs", "cancel", .protocolError, "rtCode 5019") == 1)
        #expect(result.metric("gccs", "AuthCompleted")?.count == 1)
        #expect(result.metric("gccs", "AuthCanceled")?.count == 0)
    }

    @Test(
        "completion reports the secondary authentication authType asked for, and the service refuses a wrong answer with 2002",
        arguments: [
            (1.0, GCCSAuthFlow.SecondaryCertification.auto, Outcome.ok), (0.0, .auto, .ok),
            (1.0, .always(false), Outcome(.protocolError, "rtCode 2002")), (0.0, .always(true), Outcome(.protocolError, "rtCode 2002"))
        ])
    func secondaryCertification(rate: Double, setting: GCCSAuthFlow.SecondaryCertification, expected: Outcome) async throws {
        let (host, _) = staging { $0.secondaryAuthRate = rate }
        let result = await FlowProbe.run(flow { $0.secondaryCertification = setting }, name: "gccs", host: host)
        #expect(result.outcome == expected)
        #expect(result.metric("gccs", "complete")?.count == 1)
        #expect(result.metric("gccs", "token")?.count == (expected.isOK ? 1 : 0))
        if !expected.isOK { #expect(result.errors("gccs", "complete", .protocolError, "rtCode 2002") == 1) }
    }

    @Test("a second authentication while one is running is refused with rtCode 2010")
    func busy() async throws {
        let (host, _) = staging { $0.busyRate = 1 }
        let result = await FlowProbe.run(flow(), name: "gccs", host: host)
        #expect(result.outcome == Outcome(.protocolError, "rtCode 2010"))
        #expect(result.errors("gccs", "auth", .protocolError, "rtCode 2010") == 1)
    }

    @Test(
        "server faults midway are classified",
        arguments: [
            ("stomp-error", Outcome(.protocolError, "STOMP ERROR: internal server error")),
            ("socket-drop", Outcome(.transportError, "websocket closed 1011")),
            ("reject", Outcome(.httpError, "handshake 503"))
        ])
    func faults(fault: String, expected: Outcome) async throws {
        let (host, _) = staging { options in
            switch fault {
            case "stomp-error": options.stompErrorRate = 1
            case "socket-drop": options.socketDropRate = 1
            default: options.rejectRate = 1
            }
        }
        let result = await FlowProbe.run(flow(), name: "gccs", host: host)
        #expect(result.outcome == expected)
        if fault == "reject" {
            #expect(result.errors("gccs", "connect", .httpError, "handshake 503") == 1)
        } else {
            // The fault strikes halfway: two statuses came first.
            #expect(result.metric("gccs", "SelectNodes")?.count == 1)
            #expect(result.metric("gccs", "StartVerificationOfNodes")?.count == 0)
        }
    }

    @Test("the flow deadline cuts a slow stream short")
    func flowDeadline() async throws {
        let (host, _) = staging { $0.nodeDelay = .fixed(.seconds(20)) }
        let result = await FlowProbe.run(flow(), name: "gccs", host: host, flowTimeout: .seconds(30))
        #expect(result.outcome == Outcome(.timeout, "flow deadline passed"))
        #expect(result.elapsed == .seconds(30))
    }
}
