import AuthloadCore
import AuthloadFlows
import AuthloadStaging
import AuthloadTesting
import Testing

/// A run sends traffic only to the host its profile names: every client is bound to the plan's endpoint,
/// and URLs a server hands out (Okta hrefs, Streem's token endpoint) are followed by path on that target,
/// never by their origin.
@Suite("Traffic stays on the target the profile names", .timeLimit(.minutes(1)))
struct TargetSafetyTests {
    /// Passes every request to the staging server and keeps each request target.
    final class Recorder: HTTPService, WebSocketService {
        let server: StagingServer
        let targets = Locked<[String]>([])

        init(_ server: StagingServer) { self.server = server }

        func respond(to request: HTTPRequest) -> ServiceReply {
            targets.withLock { $0.append(request.target) }
            return server.respond(to: request)
        }

        func upgrade(_ request: HTTPRequest, offeredProtocols: [String], peer: any WebSocketPeer) -> WebSocketUpgrade {
            targets.withLock { $0.append(request.target) }
            return server.upgrade(request, offeredProtocols: offeredProtocols, peer: peer)
        }
    }

    @Test("hrefs that name another origin are followed on the target, by path only")
    func oktaHrefsElsewhere() async throws {
        var configuration = StagingConfiguration()
        configuration.okta.origin = "https://elsewhere.example:9443"
        let recorder = Recorder(StagingServer(configuration: configuration))
        let result = await FlowProbe.run(
            OktaIDXFlow(options: .init()), name: "mfa", host: InProcessHost(clock: ManualClock(), service: recorder))
        #expect(result.outcome == .ok)
        let targets = recorder.targets.withLock { $0 }
        #expect(targets.count >= 6)
        #expect(targets.allSatisfy { $0.hasPrefix("/") }, "\(targets)")
    }
}
